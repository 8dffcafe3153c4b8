package harness

import (
	"slices"
	"time"

	"stampede/checker/stack"
)

// starvedBounds is how many hang bounds of the clock's time a wait may
// last while the machine starves the process (see hang).
const starvedBounds = 10

// A hang is the hang bound of one wait. The bound is the clock's time, so
// that code that waits for something that never comes is named within
// seconds. But a machine busy with other work can leave a process without
// a processor for seconds: a proof of case 6's right answers, run at nice
// 19 beside the library's runs, took 473 s for a batch of 100 scenes that
// takes 19 s, and called a right answer "still running after 5s" (seed
// 2964; it passes alone). So once the bound has passed while a goroutine
// is still ready to run, a process that has used less than half the bound
// of CPU time since the wait began is taken to be starved, not stuck, and
// the wait goes on, up to starvedBounds bounds. Code that loops uses CPU
// time as fast as the machine gives it and is named at the bound, as is
// code that is parked: only a process that wanted to run and could not is
// given longer.
type hang struct {
	start time.Time
	cpu   time.Duration // the process's CPU time at start
	cpuOK bool          // whether the system tells CPU time
	bound time.Duration
}

// newHang starts a hang bound of d.
func newHang(d time.Duration) hang {
	cpu, ok := CPUTime()
	return hang{start: time.Now(), cpu: cpu, cpuOK: ok, bound: d}
}

// past reports whether the wait has run past its bound. others returns
// the process's goroutines but the caller's; it is called only once the
// clock's bound has passed.
func (w hang) past(others func() []stack.Goroutine) bool {
	wall := time.Since(w.start)
	switch {
	case wall <= w.bound:
		return false
	case !w.cpuOK || wall > starvedBounds*w.bound:
		return true
	}
	return !w.starved(others())
}

// starved reports whether the process has used less than half the bound
// of CPU time since the wait began while one of gs (the watchdog aside)
// is ready to run.
func (w hang) starved(gs []stack.Goroutine) bool {
	now, _ := CPUTime()
	if now-w.cpu >= w.bound/2 {
		return false
	}
	return slices.ContainsFunc(gs, func(g stack.Goroutine) bool { return !stack.Parked(g.State) && !Watcher(g) })
}
