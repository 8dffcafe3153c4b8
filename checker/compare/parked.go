package compare

import (
	"runtime"
	"strings"

	"stampede/checker/stack"
)

// parked is idle for a runtime without the scheduler's counts (before Go
// 1.26): one snapshot of every goroutine, in which all but the caller's
// are parked. The signal handler's goroutine, which waits for a signal in
// a system call, counts as parked. It is far slower than the counts.
func parked() bool {
	buf := make([]byte, 1<<16)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	gs := stack.Parse(string(buf))
	for _, g := range gs[min(1, len(gs)):] { // the caller comes first
		if stack.Parked(g.State) || signalLoop(g) {
			continue
		}
		return false
	}
	return true
}

// signalLoop reports whether g is os/signal's goroutine, which waits for a
// signal in the runtime.
func signalLoop(g stack.Goroutine) bool {
	for _, f := range g.Frames {
		if strings.HasPrefix(f.Func, "os/signal.") {
			return true
		}
	}
	return false
}
