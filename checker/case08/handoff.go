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
		"reader's budget with a connection free (wrong/semaphore-lost-wakeup)",
}

// Handoff checks that a rebuild that finds every connection busy gets the
// next one given back. pool pages are missed, their queries held at a gate
// each, so that every connection is busy. Then a newcomer misses another
// page, and its path is counted in points (point.Count) up to where it
// waits. Then, for each n of that path, a newcomer misses a page of its
// own under point.ParkAt(n): parked at its n-th point, it waits while one
// held query lands and its rebuild gives its connection back; let go, its
// own query must begin, at once or after a poll, within handoffWithin, no
// other connection being given back meanwhile.
// Whatever it saw before it parked, the connection is free, and a
// rebuild's wait for one must not miss it. (The newcomer's own query is
// held once begun, so that the pool is full for the next n.) It catches a pool kept as a count under a mutex with a wake-up
// channel sent to only when someone waits on it: a rebuild that saw every
// connection busy and is between its unlock and its wait when the
// connection is given back waits for the next one given back
// (c08-semaphore-lost-wakeup, whose author saw 47 stalls in 20,000 rounds
// of a stress test; no scene of timing opens two adjacent statements).
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
		page := newPage()
		gate := hold(page) // once begun, the newcomer keeps the pool full for the next n
		park := point.ParkAt(n)
		var parkedAt bool
		var stoppedAt string
		v := h.Under(park, func() check.Verdict {
			s.read([]int{page})
			if err := s.rest(); err != nil {
				return stuckVerdict(err)
			}
			parkedAt = park.Parked() > 0
			stoppedAt = park.ParkedWhere()
			held[0].Open() // a rebuild lands and gives its connection back
			held = held[1:]
			if err := s.rest(); err != nil {
				return stuckVerdict(err)
			}
			park.Unpark()
			return check.Passed("")
		})
		if !v.Pass {
			return v
		}
		if parkedAt {
			swept++
		}
		// At once, or after a poll: within handoffWithin, well before any
		// held query's deadline could give another connection back.
		err := s.Drive(func() bool { return begun(page) }, handoffWithin)
		var st *harness.Stuck
		if errors.Is(err, errNoBound) || errors.As(err, &st) && st.Cause == harness.Deadlocked && !begun(page) {
			// Still waiting, or given up by its deadline with nothing
			// left to wake: either way its query never began.
			return check.Failed("a connection free, a rebuild waiting", fmt.Sprintf("with the database's %d "+
				"connections busy, a reader missed event %d, and its rebuild was stopped at the %s statement of the "+
				"shop's it reached (%s); meanwhile another rebuild's query landed and gave its connection back. Let go, "+
				"it never began its query within %v of the shops' clock with that connection free: its wake-up came while it "+
				"was between seeing every connection busy and waiting for one, and was lost. Take a connection in "+
				"one step that waits for one too (a buffered channel of %d tokens, or golang.org/x/sync/semaphore), "+
				"or look and wait under one lock (sync.Cond's Wait)", pool, page, ordinal(n), stoppedAt, handoffWithin, pool))
		}
		if err != nil {
			return stuckVerdict(err)
		}
		held = append(held, gate)
	}
	if swept == 0 {
		return check.Skipped("not staged: the reader of a page missed with every connection busy reached no " +
			"statement of the shop's on its way to its wait")
	}
	return check.Passed(fmt.Sprintf("a rebuild stopped at each of the %d statements on its way to a connection "+
		"while another gave one back: it got it every time", swept))
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
