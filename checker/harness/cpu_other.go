//go:build !unix

package harness

import "time"

// CPUTime reports false: this system's CPU time is not read here.
func CPUTime() (time.Duration, bool) { return 0, false }
