//go:build !linux

package main

import "time"

// goRunStart would return when the `go run` that started this command
// began; only Linux says, in /proc.
func goRunStart() (time.Time, bool) { return time.Time{}, false }
