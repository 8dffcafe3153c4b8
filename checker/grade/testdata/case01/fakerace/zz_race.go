//go:build race

package fakerace

// Built only with the race detector, and never compiles.
var _ int = "the race detector is unavailable"
