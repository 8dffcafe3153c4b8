//go:build unix

package compare

import (
	"syscall"
	"time"
)

// cpuTime returns the CPU time the process has used, user and system. On
// a machine shared with other work, a benchmark's wall time includes the
// moments the process was not running at all; its CPU time does not.
func cpuTime() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
