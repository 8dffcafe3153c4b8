package main

import "stampede/checker/grade"

// TEMPORARY until main's grade.Target.Src arrives.
func withSrc(t grade.Target, dir string) grade.Target { panic("needs grade.Target.Src: " + dir) }
func srcOf(t grade.Target) string                     { return "" }
