package harness

import (
	"fmt"

	"stampede/checker/check"
	"stampede/checker/point"
)

// OneAtATime returns run played with the student's goroutines let go one
// at a time, so that its verdict is the same in every run.
//
// A check of real goroutines on real processors sees a bug that sits
// between two adjacent statements of the student's code (a lock table
// read in one critical section and written in another; a recursive read
// lock with a writer arriving between its two halves) only when the
// machine's scheduler happens to put two visitors in that gap at once:
// sometimes, and more often on a loaded machine. Such a check's verdict
// on such code is a coin the machine tosses. Under OneAtATime every
// goroutine that reaches a schedule point (package point) waits there
// until the process is otherwise at rest, and the waits of the harness
// (Settled, Crowd.Settle, Crowd.Wait, Linger) let the held goroutines go
// one at a time, in turns (point.Turns: the one held longest first, and
// visitors held together by number), each running until it blocks. Gaps between
// statements never open, every run: finding them is the work of the
// explorer and of switches, which choose where to switch. What the check
// still decides is what blocking makes visible (a stampede, a lock held
// across the query, waiters that give up), and the race detector still
// sees every unordered access, since a hold is no synchronisation to it.
//
// Every run under OneAtATime is one the program could have had without
// it (a hold only delays a goroutine), so a correct answer cannot fail
// by it. A check that counts on processors working side by side (two
// hits contending for one lock, a spinning barrier) must not use it.
//
// A hold the harness did not let go within two seconds is let go by the
// schedule's own safety net; the play was then not the chosen one, and
// the check says so instead of passing.
func OneAtATime[N any](run func(h *H, newShop N) check.Verdict) func(h *H, newShop N) check.Verdict {
	return func(h *H, newShop N) check.Verdict {
		return h.Under(point.Turns(), func() check.Verdict { return run(h, newShop) })
	}
}

// Under plays fn with the schedule s in force: every goroutine that
// reaches a schedule point waits there until the harness's waits let it
// go, as s chooses (see OneAtATime for Turns, and point.Lockstep, under
// which the goroutines take turns one statement each, so that two
// visitors of the same code both look before either acts). A hold the
// harness did not let go within two seconds is let go by the schedule's
// own safety net; the play was then not the chosen one, and a PASS
// becomes a check that says so.
func (h *H) Under(s *point.Schedule, fn func() check.Verdict) check.Verdict {
	point.Start(s)
	h.turns = true
	defer func() {
		h.turns = false
		point.Stop()
	}()
	v := fn()
	if late := s.Late(); late > 0 && v.Pass {
		return check.Skipped(fmt.Sprintf("the checker lost hold of its schedule (%d goroutines let go by its safety net): the verdict is not one it can stand by", late))
	}
	return v
}

// holding reports whether a OneAtATime schedule holds goroutines that a
// wait of the harness must let go.
func (h *H) holding() bool { return h.turns && point.Holding() }

// turnsIdle reports, under OneAtATime or CountsDecideRest, whether the
// scheduler's counts say the process is at rest, so that a release need
// not wait for a snapshot of every goroutine's stack: with fifty visitors
// a snapshot took most of each turn. The counts can call a goroutine that
// waits inside the runtime (for a garbage collection) idle; a turn given
// then is one Go's scheduler could give too, so a right answer still
// cannot fail by it. Before Quiet reports rest to its caller, who counts
// or moves a clock on it, a snapshot must agree. Otherwise, or where the
// runtime has no counts, it reports false and the caller takes the
// snapshot.
func (h *H) turnsIdle() bool {
	if !h.turns && !h.counts {
		return false
	}
	idle, known := schedulerIdle()
	return known && idle
}

// CountsDecideRest has the scheduler's counts, not a snapshot of every
// goroutine's stack, decide in Quiet when the next goroutine a schedule
// point holds goes on, until the returned function is called; Quiet
// still takes one snapshot before it reports rest (see turnsIdle). A
// driver calls it for a scene whose every goroutine waits inside the
// process (the embedded Redis, reached through an in-memory pipe,
// included): the counts call a goroutine that waits for a reply from
// another process idle, which a snapshot does not. A snapshot's cost
// grows with every goroutine the process holds, those a right answer
// leaves parked for good included (a pool of workers per shop, twenty
// for each of a check's hundred plays), and without the counts one is
// taken at every release.
func (h *H) CountsDecideRest() (restore func()) {
	was := h.counts
	h.counts = true
	return func() { h.counts = was }
}
