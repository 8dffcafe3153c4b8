//go:build unix

package harness

import (
	"syscall"
	"time"
)

// CPUTime returns the CPU time the process has used, user and system, and
// false where the system cannot say. On a machine shared with other work,
// a program's wall time includes the moments it was not running at all;
// its CPU time does not: it measures work, not the machine's load.
func CPUTime() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
