package case08

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"stampede/checker/check"
	"stampede/checker/fleet"
	"stampede/checker/harness"
	"stampede/checker/point"
	"stampede/shop/events"
)

// handoffWithin is how long, on the shops' clock, a rebuild may take to
// begin its query once a connection is free: a wait that polls for one
// every tenth of a second or so is fine. It is far below any deadline a
// held query's rebuild may have (a second at least), whose end would give
// another connection back and hide a lost wake-up.
const handoffWithin = 250 * time.Millisecond

// handoffInfo is the check that a rebuild waiting for a connection gets
// the one given back.
var handoffInfo = check.Info{
	ID: "handoff",
	Name: "a rebuild that finds every connection busy gets the next one given back, wherever between its look " +
		"and its wait the other rebuild gives it back",
	Catches: "a pool counted under a mutex whose wake-up reaches only a rebuild already waiting: a connection given " +
		"back between another rebuild's \"all busy\" and its wait wakes nobody, and that rebuild waits out its " +
		"reader's budget with a connection free (wrong/semaphore-lost-wakeup); and a wake-up channel with room for " +
		"one, which drops the second of two connections given back while two rebuilds are between their look and " +
		"their wait (wrong/wake-chan-lost)",
}

// Handoff checks that a rebuild that finds every connection busy gets the
// next one given back. pool pages are missed, their queries held at a gate
// each, so that every connection is busy. Then a newcomer misses another
// page, and its path is counted in points (point.Count) up to where it
// waits. Then, for each n of that path, a newcomer misses a page of its
// own under point.ParkAt(n, 2n), and a second one after it: each parked at
// its n-th point, they wait while two held queries land and their
// rebuilds give their connections back; let go, both their queries must
// begin, at once or after a poll, within handoffWithin, no other
// connection being given back meanwhile.
// Whatever it saw before it parked, the connection is free, and a
// rebuild's wait for one must not miss it. (The newcomer's own query is
// held once begun, so that the pool is full for the next n.) It catches a pool kept as a count under a mutex with a wake-up
// channel sent to only when someone waits on it: a rebuild that saw every
// connection busy and is between its unlock and its wait when the
// connection is given back waits for the next one given back
// (c08-semaphore-lost-wakeup, whose author saw 47 stalls in 20,000 rounds
// of a stress test; no scene of timing opens two adjacent statements), and
// a wake-up channel with room for one, which keeps the first of two
// wake-ups and drops the second (c8-wake-chan-lost).
func Handoff(h *harness.H, newShop NewShop) check.Verdict {
	var mu sync.Mutex
	gates := map[int]*harness.Gate{}
	began := map[int]int{}
	hold := func(id int) *harness.Gate {
		g := harness.NewGate()
		mu.Lock()
		gates[id] = g
		mu.Unlock()
		return g
	}
	hook := func(_ *scene, ctx context.Context, id int) error {
		mu.Lock()
		began[id]++
		g := gates[id]
		mu.Unlock()
		if g != nil {
			return g.Wait(ctx)
		}
		return nil
	}
	begun := func(id int) bool {
		mu.Lock()
		defer mu.Unlock()
		return began[id] > 0
	}
	s, err := newSceneWith(h, newShop, false, hook, nil)
	if err != nil {
		return fleet.Unreachable(err)
	}
	defer func() {
		mu.Lock()
		for _, g := range gates {
			g.Open()
		}
		mu.Unlock()
		s.Close()
	}()

	// Every connection busy: pool pages missed, each query held.
	var held []*harness.Gate
	for _, id := range events.IDs(pool) {
		held = append(held, hold(id))
	}
	s.read(events.IDs(pool))
	if err := s.rest(); err != nil {
		return stuckVerdict(err)
	}
	busy := 0
	for _, id := range events.IDs(pool) {
		if begun(id) {
			busy++
		}
	}
	if busy < pool {
		return check.Skipped(fmt.Sprintf("not staged: %d pages missed at once, and %s of them began, not "+
			"%d: the pool was never full (parallel judges rebuilds one at a time)", pool, fleet.Count(busy, "query"), pool))
	}
	next := pool + 1 // the next page no reader has missed
	newPage := func() int { next++; return next - 1 }

	// The newcomer's path to its wait, in points.
	count := point.Count()
	first := newPage()
	firstGate := hold(first) // once begun, it keeps the pool full
	v := h.Under(count, func() check.Verdict {
		s.read([]int{first})
		if err := s.rest(); err != nil {
			return stuckVerdict(err)
		}
		return check.Passed("")
	})
	if !v.Pass {
		return v
	}
	if begun(first) {
		return check.Skipped(fmt.Sprintf("not staged: with %d queries held in the database, its whole pool, a "+
			"reader of another page had its query begun at once: nothing waits for a connection when the rebuilds "+
			"have no bound (at-most judges that)", pool))
	}
	path := count.Hits()
	// Its connection: the first held query lands, and the newcomer's own
	// query takes it, held in turn: the pool is full again.
	held[0].Open()
	held = append(held[1:], firstGate)
	if err := s.rest(); err != nil {
		return stuckVerdict(err)
	}

	swept := 0
	for n := 1; n <= path; n++ {
		// Two newcomers, the second coming once the first is stopped:
		// each stops at its n-th statement (the second's n-th is the
		// process's 2n-th), and two connections are given back meanwhile.
		// Two wake-ups, where a wait that keeps one pending loses the
		// second (c8-wake-chan-lost).
		pages := []int{newPage(), newPage()}
		gates := []*harness.Gate{hold(pages[0]), hold(pages[1])} // once begun, they keep the pool full
		park := point.ParkAt(n, 2*n)
		var parked int
		var stoppedAt string
		v := h.Under(park, func() check.Verdict {
			for _, page := range pages {
				s.read([]int{page})
				if err := s.rest(); err != nil {
					return stuckVerdict(err)
				}
			}
			parked = park.Parked()
			stoppedAt = park.ParkedWhere()
			held[0].Open() // two rebuilds land and give their connections back
			held[1].Open()
			held = held[2:]
			if err := s.rest(); err != nil {
				return stuckVerdict(err)
			}
			park.Unpark()
			return check.Passed("")
		})
		if !v.Pass {
			return v
		}
		if parked > 0 {
			swept++
		}
		// At once, or after a poll: within handoffWithin, well before any
		// held query's deadline could give another connection back.
		both := func() bool { return begun(pages[0]) && begun(pages[1]) }
		err := s.Drive(both, handoffWithin)
		var st *harness.Stuck
		if errors.Is(err, errNoBound) || errors.As(err, &st) && st.Cause == harness.Deadlocked && !both() {
			// Still waiting, or given up by its deadline with nothing
			// left to wake: either way a query never began.
			waiting := pages[0]
			if begun(waiting) {
				waiting = pages[1]
			}
			return check.Failed("a connection free, a rebuild waiting", fmt.Sprintf("with the database's %d "+
				"connections busy, readers missed events %d and %d, and their rebuilds were stopped at the %s statement "+
				"of the shop's each reached (%s); meanwhile two other rebuilds' queries landed and gave their "+
				"connections back. Let go, the rebuild of event %d never began its query within %v of the shops' "+
				"clock with a connection free: a wake-up came while it was between seeing every connection busy and "+
				"waiting for one, and was lost (or kept as one where two came). Take a connection in one step that "+
				"waits for one too (a buffered channel of %d tokens, or golang.org/x/sync/semaphore), or look and "+
				"wait under one lock, in a loop (sync.Cond's Wait)", pool, pages[0], pages[1], ordinal(n),
				stoppedAt, waiting, handoffWithin, pool))
		}
		if err != nil {
			return stuckVerdict(err)
		}
		held = append(held, gates...)
	}
	if swept == 0 {
		return check.Skipped("not staged: the reader of a page missed with every connection busy reached no " +
			"statement of the shop's on its way to its wait")
	}
	return check.Passed(fmt.Sprintf("two rebuilds stopped at each of the %d statements on their way to a connection "+
		"while two others gave theirs back: both got one every time", swept))
}

// ordinal says 1 as "1st", 2 as "2nd" and so on.
func ordinal(n int) string {
	suffix := "th"
	switch {
	case n%100 >= 11 && n%100 <= 13:
	case n%10 == 1:
		suffix = "st"
	case n%10 == 2:
		suffix = "nd"
	case n%10 == 3:
		suffix = "rd"
	}
	return fmt.Sprintf("%d%s", n, suffix)
}
