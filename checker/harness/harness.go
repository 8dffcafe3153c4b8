// Package harness drives student code for the checks: crowds of visitors,
// gates that hold database queries until the checker lets them go, and the
// test that every goroutine has settled.
//
// Nothing here decides a verdict by how long something took. A check waits
// until the process has settled (every goroutine parked on a lock, a channel
// or a timer, in consistent snapshots of all goroutines), then counts. The
// only clock is the hang bound, which only code that never stops reaches.
package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"stampede/checker/check"
	"stampede/checker/point"
	"stampede/checker/stack"
)

// DefaultBound is how long a check waits for code that neither finishes nor
// settles (a loop that never ends) before it calls it stuck.
const DefaultBound = 5 * time.Second

// Bound is a case bound to one implementation: the scenario that `shop run`
// plays and the functions that decide its checks. The worker runs it.
type Bound struct {
	// Scenario plays the case's story and prints its figures to w. Args are
	// the flags given to `shop run` after the case number.
	Scenario func(ctx context.Context, w io.Writer, args []string) error
	// Checks maps each check's id to the function that decides it.
	Checks map[string]func(h *H) check.Verdict
}

// H is what a check function works with.
type H struct {
	ctx         context.Context
	dir         string        // the implementation's package directory, "stampede/cases/case01"
	bound       time.Duration // see DefaultBound
	seed        uint64        // see Seed
	part, parts int           // see Part
	// visitors counts the visitors Visit has started, so that each has
	// a number of its own for the schedule points (point.Rank).
	visitors atomic.Int64
	// turns is set while a check plays OneAtATime: the harness's waits
	// then let the schedule's held goroutines go.
	turns bool
	// counts is set while the scheduler's counts decide rest in Quiet
	// (CountsDecideRest).
	counts bool
}

// New returns an H for checking the implementation whose import path is
// pkg. The import path is also the directory in the worker's stacks, as the
// worker is built with -trimpath.
func New(ctx context.Context, pkg string, bound time.Duration) *H {
	return &H{ctx: ctx, dir: pkg, bound: bound}
}

// SetSeed sets the seed that Seed returns.
func (h *H) SetSeed(seed uint64) { h.seed = seed }

// Seed returns the seed the grader handed the check (`check N --seed S`),
// or 0 when it handed none: a check that draws random scenes then plays
// those of a seed it always starts from (explore.DefaultSeed), and names
// the seed of a failing scene in its verdict, so that it can be played
// again.
func (h *H) Seed() uint64 { return h.seed }

// SetPart makes the check play part k (from 0) of n (check.Info.Parts).
func (h *H) SetPart(k, n int) { h.part, h.parts = k, n }

// Part returns the part of the check this process plays, k of n, from 0;
// 0 of 1 for a check played whole.
func (h *H) Part() (k, n int) { return h.part, max(h.parts, 1) }

// Context returns the check's context.
func (h *H) Context() context.Context { return h.ctx }

// Dir returns the implementation's package directory as stacks show it.
func (h *H) Dir() string { return h.dir }

// Settled waits until ready returns true and every goroutine but the
// caller's is parked, in three consecutive snapshots. It returns a *Stuck
// error when that has not happened within the hang bound.
func (h *H) Settled(ready func() bool) error {
	return h.await(func(gs []stack.Goroutine) bool {
		return ready() && all(gs, stack.Goroutine.Blocked)
	}, nil, time.Millisecond, hangBudget(h.bound))
}

// Watch watches a story (code that is not a crowd of visitors) until done
// is closed. It returns a *Stuck error at once when every goroutine is
// blocked where no timer can wake it, or when the story is still running
// after it has used cpu of the process's CPU time or wall of the clock's,
// naming the student's lines either way. CPU time measures the story's
// work: on a loaded machine a story takes longer on the clock, not more
// work, while a loop that never ends uses CPU time as fast as it can. The
// clock's limit, longer, is for a loop that sleeps on real timers, which
// uses almost none. Where the system cannot tell CPU time, only the
// clock's limit holds.
func (h *H) Watch(done <-chan struct{}, cpu, wall time.Duration) error {
	budgets := []budget{wallBudget(wall)}
	if start, ok := CPUTime(); ok {
		budgets = append(budgets, budget{
			spent: func() time.Duration { now, _ := CPUTime(); return now - start },
			limit: cpu,
			of:    " of CPU time",
		})
	}
	var deadlock *Stuck
	err := h.await(func(gs []stack.Goroutine) bool {
		for _, g := range gs {
			if !g.Blocked() || stack.Timed(g.State) {
				return false
			}
		}
		deadlock = h.describe(gs, Deadlocked, "deadlocked", h.mine)
		return true
	}, done, 20*time.Millisecond, budgets...)
	var st *Stuck
	if errors.As(err, &st) {
		return h.describe(h.others(), st.Cause, st.Why, h.mine)
	}
	if err != nil {
		return err
	}
	select {
	case <-done:
		return nil
	default:
		return deadlock
	}
}

// Asleep reports whether a crowd's visitor is asleep (in time.Sleep) in
// the implementation's code: a polling loop, between two looks.
func (h *H) Asleep() bool {
	for _, g := range h.others() {
		if g.State == "sleep" && isVisitor(g) && h.mine(g) {
			return true
		}
	}
	return false
}

// mine reports whether g runs the implementation's code.
func (h *H) mine(g stack.Goroutine) bool { return g.Has(h.dir) }

// budget is how much of something a wait may use before the code it
// watches is called stuck.
type budget struct {
	spent func() time.Duration // how much the wait has used so far
	limit time.Duration
	of    string // what is measured, for the message: "" for the clock's time
	// starved, if set, excuses a budget used up while the machine starved
	// the process (see hang).
	starved func(gs []stack.Goroutine) bool
}

// over reports whether the budget is used up, gs being the process's
// goroutines now.
func (b budget) over(gs []stack.Goroutine) bool {
	return b.spent() > b.limit && (b.starved == nil || !b.starved(gs))
}

// hangBudget is the hang bound of d as a budget: d of the clock's time,
// or up to starvedBounds times d while the machine starves the process.
func hangBudget(d time.Duration) budget {
	w := newHang(d)
	return budget{
		spent: func() time.Duration { return time.Since(w.start) },
		limit: d,
		starved: func(gs []stack.Goroutine) bool {
			return w.cpuOK && time.Since(w.start) <= starvedBounds*d && w.starved(gs)
		},
	}
}

// wallBudget is a budget of d on the clock, from now.
func wallBudget(d time.Duration) budget {
	start := time.Now()
	return budget{spent: func() time.Duration { return time.Since(start) }, limit: d}
}

// await takes a snapshot of all goroutines every tick until cond holds in
// three in a row or done is closed. It returns a *Stuck error once any of
// the budgets is used up.
func (h *H) await(cond func([]stack.Goroutine) bool, done <-chan struct{}, every time.Duration, budgets ...budget) error {
	tick := time.NewTicker(every)
	defer tick.Stop()
	streak := 0
	for {
		if h.holding() {
			// Goroutines held at schedule points go on first, one at
			// a time; what was seen before no longer holds.
			streak = 0
			if err := h.Quiet(func() bool { return true }); err != nil {
				return err
			}
		}
		gs := h.others()
		if len(gs) > MaxGoroutines {
			return h.flood(gs)
		}
		if cond(gs) {
			streak++
		} else {
			streak = 0
		}
		if streak >= 3 {
			return nil
		}
		for _, b := range budgets {
			if b.over(gs) {
				return h.stuck(gs, Running, fmt.Sprintf("still running after %v%s", b.limit, b.of))
			}
		}
		select {
		case <-done:
			return nil
		case <-h.ctx.Done():
			return h.ctx.Err()
		case <-tick.C:
		}
	}
}

// MaxGoroutines is how many goroutines a check tolerates at once. The
// checks need a few hundred; the race detector dies at 8128.
const MaxGoroutines = 4000

// flood describes a process with more than MaxGoroutines goroutines.
func (h *H) flood(gs []stack.Goroutine) *Stuck {
	st := &Stuck{
		Cause: Flood,
		Why:   fmt.Sprintf("more than %d goroutines alive at once", MaxGoroutines),
		Hint:  "a goroutine started on every call that never ends, or a loop that starts goroutines without bound",
	}
	count := map[stack.Frame]int{}
	var best stack.Frame
	for _, g := range gs {
		if f, ok := g.In(h.dir); ok {
			count[f]++
			if count[f] > count[best] {
				best = f
			}
		}
	}
	if count[best] > 0 {
		st.Places = []string{fmt.Sprintf("%d of them at %s", count[best], stack.Where(best, check.Module))}
	}
	return st
}

// others returns every goroutine but the caller's.
func (h *H) others() []stack.Goroutine {
	gs := stack.All()
	if len(gs) > 0 {
		gs = gs[1:] // runtime.Stack puts the caller first
	}
	// A schedule's safety net (package point) is the checker's, and waits
	// on a ticker: counted in, it would look like a goroutine that may
	// still wake the others, and hide a deadlock until the hang bound.
	return slices.DeleteFunc(gs, point.SafetyNet)
}

func all(gs []stack.Goroutine, ok func(stack.Goroutine) bool) bool {
	for _, g := range gs {
		if !ok(g) {
			return false
		}
	}
	return true
}

// Cause is why a process did not come to rest, for the code that decides
// what a Stuck means: a driver or an explorer asks the Cause, never Why's
// words.
type Cause int

const (
	// Running is the hang bound run out with some goroutine still at
	// work: code that never stops, or a machine too loaded to let it stop
	// in time (Looping and Busy tell which is likelier).
	Running Cause = iota + 1
	// Deadlocked is every goroutine waiting for something that no
	// goroutine and no timer will ever do: a lock nobody releases, a
	// channel nobody sends on, or, in a scene on a virtual clock, a wait
	// while nobody sleeps on the clock.
	Deadlocked
	// Flood is more than MaxGoroutines goroutines alive at once.
	Flood
)

// Stuck says where visitors are stuck, in the student's own lines.
type Stuck struct {
	Cause  Cause
	Why    string   // "deadlocked", "still running after 5s"
	Places []string // "49 visitors stuck at cases/case01/shop.go:31 in sync.Mutex.Lock"
	Hint   string   // the likely cause
	// Busy is set when some of them are running, not waiting: code that
	// never stops, which every check of the case will meet again.
	Busy bool
	// Looping is set when some goroutine was running in the code under
	// test itself (for a visitor, Places says "still running near" or
	// "spinning at" it). Busy alone may be a visitor the scheduler of a
	// loaded machine had not yet reached, in the checker's code; Looping
	// is the code's own loop, or the code caught at work.
	Looping bool
	// Inside counts the goroutines that were in the code under test, at
	// work or waiting, and Visiting the crowds' visitors among them.
	Inside, Visiting int
}

// Load reports whether a loaded machine, not the code under test, is the
// likelier reason the process did not come to rest: no goroutine was in
// the code under test at all (whatever waited, waited in the checker), or
// the hang bound ran out with nothing of the code's at work and every
// visitor still in the checker's own lines (a loaded machine's scheduler
// had not yet reached them; seen at a load of 20 on two cores). A driver
// of scenes plays such a scene again rather than blame the code; every
// other Stuck is the code's: a deadlock, a flood of goroutines, its own
// loop caught running, or visitors inside it that never settled.
// (Describing a flood reads no stacks: a flood is always the code's.)
func (s *Stuck) Load() bool {
	if s.Cause == Flood {
		return false
	}
	return s.Inside == 0 || s.Cause == Running && !s.Looping && s.Visiting == 0
}

func (s *Stuck) Error() string {
	msg := s.Why
	if len(s.Places) > 0 {
		msg += ": " + strings.Join(s.Places, "; ")
	}
	if s.Hint != "" {
		msg += " (likely " + s.Hint + ")"
	}
	return msg
}

// LockOrder is the likely cause of goroutines waiting for locks at two or
// more of the student's lines, with nothing running.
const LockOrder = "a lock that is never released: an Unlock missing on a path that returns early (an error, a panic), " +
	"or a lock taken twice by one goroutine; or two locks taken in opposite orders (one call holds the first " +
	"and waits for the second while another holds the second and waits for the first): take them in one order on every path"

// LockWait reports whether a goroutine in this state waits for a lock.
func LockWait(state string) bool {
	return strings.HasPrefix(state, "sync.") && strings.Contains(state, "Lock")
}

// likelyCause names the usual reason for visitors stuck in a state.
func likelyCause(state string) string {
	switch {
	case running(state):
		return "a loop that never ends"
	case state == "sync.Mutex.Lock", state == "sync.RWMutex.Lock", state == "sync.RWMutex.RLock":
		return "a lock that is never released: an Unlock missing on a path that returns early (an error, a panic), or a lock taken twice by one goroutine"
	case state == "sync.WaitGroup.Wait":
		return "a WaitGroup whose Done is not called on every path"
	case strings.HasPrefix(state, "chan"), state == "select":
		return "a channel that nobody closes or sends on: close the flight's done channel on every path, errors and panics too"
	case state == "sync.Cond.Wait":
		return "a Cond that is never signalled after the value arrives"
	case state == "sleep":
		return "a polling loop whose condition never comes true"
	}
	return ""
}

// printing reports whether any chosen goroutine is writing output.
func printing(gs []stack.Goroutine, pick func(stack.Goroutine) bool) bool {
	for _, g := range gs {
		if !pick(g) {
			continue
		}
		for _, f := range g.Frames {
			if strings.HasPrefix(f.Func, "fmt.") || strings.HasPrefix(f.Func, "os.(*File).Write") ||
				strings.HasPrefix(f.Func, "log.") {
				return true
			}
		}
	}
	return false
}

// running reports whether a goroutine in this state is at work: running,
// ready to run, or in one of the runtime's own waits that end by
// themselves (a garbage collection's: a loop caught by a snapshot while
// it helps the collector is still a loop, not a goroutine stuck).
func running(state string) bool {
	switch state {
	case "running", "runnable", "semacquire", "GC assist wait":
		return true
	}
	return false
}

// Stuck returns a *Stuck of the given cause for the process as it is now:
// where the crowds' visitors are, in the code's lines, and what of the
// code is at work. A driver of its own (a fleet's) calls it when it gives
// up waiting for rest, so that its Stuck carries the facts Load decides
// by.
func (h *H) Stuck(cause Cause, why string) *Stuck { return h.stuck(h.others(), cause, why) }

// stuck describes the crowds' visitors among gs.
func (h *H) stuck(gs []stack.Goroutine, cause Cause, why string) *Stuck {
	s := h.describe(gs, cause, why, isVisitor)
	// A helper of the code's own (no visitor) that runs is a loop too.
	for _, g := range gs {
		if (running(g.State) || point.AtPoint(g)) && h.mine(g) {
			s.Looping = true
		}
	}
	return s
}

// describe says where the goroutines among gs that pick chooses are, in
// the student's lines. Running goroutines come first: a loop that never
// ends is the cause, and goroutines waiting behind it are the effect.
func (h *H) describe(gs []stack.Goroutine, cause Cause, why string, pick func(stack.Goroutine) bool) *Stuck {
	s := &Stuck{Cause: cause, Why: why}
	for _, g := range gs {
		if h.mine(g) {
			s.Inside++
			if isVisitor(g) {
				s.Visiting++
			}
		}
	}
	count, states := map[string]int{}, map[string]int{}
	var order []string
	spinning, held := false, false
	lockedAt := map[string]bool{} // the student's lines where a goroutine waits for a lock
	for _, g := range gs {
		if !pick(g) {
			continue
		}
		f, mine := g.In(h.dir)
		where := "the checker's own code"
		if mine {
			where = stack.Where(f, check.Module)
		}
		place := "stuck at " + where + " in " + g.State
		switch {
		case running(g.State) || point.AtPoint(g):
			s.Busy = true
			if !mine {
				continue // a visitor the scheduler has not reached yet: noise
			}
			s.Looping = true
			place = "still running near " + where
			if calls(g, "runtime.Gosched") {
				place = "spinning at " + where + " (a loop around runtime.Gosched)"
				spinning = true
			}
		case atGate(g):
			// The query the check holds on purpose: the student's db.Top
			// call, not a select of theirs.
			place = "in the database query called at " + where + ", which the checker holds"
			held = true
		default:
			states[g.State]++
			if mine && LockWait(g.State) {
				lockedAt[where] = true
			}
		}
		if count[place] == 0 {
			order = append(order, place)
		}
		count[place]++
	}
	// Running goroutines first: a loop that never ends is the cause, and
	// the goroutines waiting behind it are the effect.
	slices.SortStableFunc(order, func(a, b string) int {
		return boolInt(!strings.HasPrefix(a, "still")) - boolInt(!strings.HasPrefix(b, "still"))
	})
	common := "" // the state most of them are in
	for st, n := range states {
		if n > states[common] || n == states[common] && st < common {
			common = st
		}
	}
	if s.Busy {
		common = "running"
	}
	s.Hint = likelyCause(common)
	if !s.Busy && len(lockedAt) >= 2 {
		s.Hint = LockOrder
	}
	if s.Busy && (spinning || held) {
		s.Hint = "busy-waiting: the visitors spin while the query runs instead of waiting for it; wait on a channel, a lock or a sync.Cond instead"
	}
	if printing(gs, pick) {
		s.Hint = "output: the code prints so much that the checks cannot finish; remove the debug printing"
	}
	for _, p := range order {
		noun := "visitors"
		if count[p] == 1 {
			noun = "visitor"
		}
		s.Places = append(s.Places, fmt.Sprintf("%d %s %s", count[p], noun, p))
	}
	return s
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// atGate reports whether g is waiting at one of the checker's gates, inside
// a database query that a check holds.
func atGate(g stack.Goroutine) bool { return calls(g, gateWait) }

// calls reports whether fn is on g's stack.
func calls(g stack.Goroutine, fn string) bool {
	return slices.ContainsFunc(g.Frames, func(f stack.Frame) bool { return f.Func == fn })
}

// gateWait names Gate.Wait as stacks show it.
const gateWait = check.Module + "/checker/harness.(*Gate).Wait"

// isVisitor reports whether g is one of a crowd's visitors.
func isVisitor(g stack.Goroutine) bool {
	for _, f := range g.Frames {
		if strings.HasSuffix(f.File, "checker/harness/crowd.go") {
			return true
		}
	}
	return false
}

// PkgOf returns the import path of the package that defines S (or what S
// points to): the code under test's directory as the worker's stacks show
// it, for New.
func PkgOf[S any]() string {
	t := reflect.TypeFor[S]()
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.PkgPath()
}
