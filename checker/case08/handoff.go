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

// handoffInfo is the check that a connection given back goes to a
// rebuild waiting for it, and to one only.
var handoffInfo = check.Info{
	ID: "handoff",
	Name: "a connection given back goes to a rebuild waiting for it, and to one only, wherever between their " +
		"statements the rebuilds are",
	Catches: "a pool counted under a mutex whose wake-up reaches only a rebuild already waiting: a connection given " +
		"back between another rebuild's \"all busy\" and its wait wakes nobody, and that rebuild waits out its " +
		"reader's budget with a connection free (wrong/semaphore-lost-wakeup); a wake-up channel with room for " +
		"one, which drops the second of two connections given back while two rebuilds are between their look and " +
		"their wait (wrong/wake-chan-lost); and a sync.Cond pool whose woken waiter takes a connection without " +
		"looking again (if, not for): a newcomer that takes the connection between the giver's unlock and its " +
		"Signal leaves one more for the waiter, 21 queries on a pool of 20 (wrong/cond-if-not-for)",
}

// heldPool is the scene Handoff plays: pages whose queries are held at a
// gate of their own once begun, counted as they begin and as they end.
type heldPool struct {
	s       *scene
	mu      sync.Mutex
	gates   map[int]*harness.Gate
	began   map[int]int // page -> queries begun
	beganAt map[int]int // page -> points reached (under hits) when its first query began
	hits    func() int  // the points reached so far, when a count runs
	running int         // queries begun and not ended
	most    int         // the most running at once
	next    int         // the next page no reader has missed
}

// hook is the scene's database hook: it counts the query and holds it at
// its page's gate, if it has one.
func (p *heldPool) hook(_ *scene, ctx context.Context, id int) error {
	p.mu.Lock()
	p.began[id]++
	if p.began[id] == 1 && p.hits != nil {
		p.beganAt[id] = p.hits()
	}
	p.running++
	p.most = max(p.most, p.running)
	g := p.gates[id]
	p.mu.Unlock()
	var err error
	if g != nil {
		err = g.Wait(ctx)
	}
	p.mu.Lock()
	p.running--
	p.mu.Unlock()
	return err
}

// hold gives page id a gate its query will wait at.
func (p *heldPool) hold(id int) *harness.Gate {
	g := harness.NewGate()
	p.mu.Lock()
	p.gates[id] = g
	p.mu.Unlock()
	return g
}

// newPage returns a page no reader has missed yet, its query to be held.
func (p *heldPool) newPage() (int, *harness.Gate) {
	p.next++
	return p.next - 1, p.hold(p.next - 1)
}

func (p *heldPool) begun(id int) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.began[id] > 0
}

// mostAtOnce returns the most queries the database has had at once.
func (p *heldPool) mostAtOnce() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.most
}

// openAll lets every held query go.
func (p *heldPool) openAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, g := range p.gates {
		g.Open()
	}
}

// Handoff checks that a connection given back goes to one rebuild waiting
// for it, wherever the rebuilds are between their statements. Two scenes,
// on a pool kept full: pool pages are missed, their queries held at a gate
// each, every query begun later is held too.
//
// First, a newcomer misses another page, and its path is counted in
// points (point.Count) up to where it waits. Then, for each n of that
// path, a newcomer misses a page of its own under point.ParkAt(n, 2n),
// and a second one after it: each parked at its n-th point, they wait
// while two held queries land and their rebuilds give their connections
// back; let go, both their queries must begin, at once or after a poll,
// within handoffWithin, no other connection being given back meanwhile.
// Whatever it saw before it parked, the connection is free, and a
// rebuild's wait for one must not miss it. It catches a pool kept as a
// count under a mutex with a wake-up channel sent to only when someone
// waits on it: a rebuild that saw every connection busy and is between its
// unlock and its wait when the connection is given back waits for the next
// one given back (c08-semaphore-lost-wakeup, whose author saw 47 stalls in
// 20,000 rounds of a stress test; no scene of timing opens two adjacent
// statements), and a wake-up channel with room for one, which keeps the
// first of two wake-ups and drops the second (c8-wake-chan-lost).
//
// Second, with a rebuild waiting, a held query lands, and the points from
// there to the waiter's query are counted. Then, for each n of them, with
// a rebuild waiting again, a held query lands under point.ParkAt(n): the
// giver, or the waiter it wakes, stops at its n-th point while a newcomer
// misses a page. Let go, the connection must have gone to one of the two,
// and the other must wait: the database never has more than pool queries
// at once. It catches a pool counted under a sync.Cond whose waiter, once
// woken, takes a connection without looking again (if, not for): a
// newcomer that takes the connection between the giver's unlock and its
// Signal leaves the woken waiter to take one more (c08-cond-if-not-for:
// 21 queries on a pool of 20).
func Handoff(h *harness.H, newShop NewShop) check.Verdict {
	p := &heldPool{gates: map[int]*harness.Gate{}, began: map[int]int{}, beganAt: map[int]int{}, next: pool + 1}
	s, err := newSceneWith(h, newShop, false, p.hook, nil)
	if err != nil {
		return fleet.Unreachable(err)
	}
	p.s = s
	defer func() {
		p.openAll()
		s.Close()
	}()

	// Every connection busy: pool pages missed, each query held.
	var held []*harness.Gate
	for _, id := range events.IDs(pool) {
		held = append(held, p.hold(id))
	}
	s.read(events.IDs(pool))
	if err := s.rest(); err != nil {
		return stuckVerdict(err)
	}
	busy := 0
	for _, id := range events.IDs(pool) {
		if p.begun(id) {
			busy++
		}
	}
	if busy < pool {
		return check.Skipped(fmt.Sprintf("not staged: %d pages missed at once, and %s of them began, not "+
			"%d: the pool was never full (parallel judges rebuilds one at a time)", pool, fleet.Count(busy, "query"), pool))
	}
	held, swept, v := p.wakeEach(h, held)
	if !v.Pass || v.Skipped {
		return v
	}
	given, v := p.giveEach(h, held)
	if !v.Pass {
		return v
	}
	figure := fmt.Sprintf("two rebuilds stopped at each of the %d statements on their way to a connection "+
		"while two others gave theirs back: both got one every time", swept)
	if given > 0 {
		figure += fmt.Sprintf("; a connection given back with the giver or its taker stopped at each of %d "+
			"statements while a newcomer came: one of the two got it, never both", given)
	}
	return check.Passed(figure)
}

// wakeEach is Handoff's first scene, played on held, the gates of the
// pool's held queries. It returns the gates held at its end and how many
// statements it stopped the newcomers at.
func (p *heldPool) wakeEach(h *harness.H, held []*harness.Gate) ([]*harness.Gate, int, check.Verdict) {
	s := p.s
	// The newcomer's path to its wait, in points.
	count := point.Count()
	first, firstGate := p.newPage() // once begun, it keeps the pool full
	v := h.Under(count, func() check.Verdict {
		s.read([]int{first})
		if err := s.rest(); err != nil {
			return stuckVerdict(err)
		}
		return check.Passed("")
	})
	if !v.Pass {
		return nil, 0, v
	}
	if p.begun(first) {
		return nil, 0, check.Skipped(fmt.Sprintf("not staged: with %d queries held in the database, its whole pool, a "+
			"reader of another page had its query begun at once: nothing waits for a connection when the rebuilds "+
			"have no bound (at-most judges that)", pool))
	}
	path := count.Hits()
	// Its connection: the first held query lands, and the newcomer's own
	// query takes it, held in turn: the pool is full again.
	held[0].Open()
	held = append(held[1:], firstGate)
	if err := s.rest(); err != nil {
		return nil, 0, stuckVerdict(err)
	}

	swept := 0
	for n := 1; n <= path; n++ {
		// Two newcomers, the second coming once the first is stopped:
		// each stops at its n-th statement (the second's n-th is the
		// process's 2n-th), and two connections are given back meanwhile.
		// Two wake-ups, where a wait that keeps one pending loses the
		// second (c8-wake-chan-lost).
		var pages [2]int
		var gates [2]*harness.Gate
		pages[0], gates[0] = p.newPage() // once begun, they keep the pool full
		pages[1], gates[1] = p.newPage()
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
			return nil, 0, v
		}
		if parked > 0 {
			swept++
		}
		// At once, or after a poll: within handoffWithin, well before any
		// held query's deadline could give another connection back.
		both := func() bool { return p.begun(pages[0]) && p.begun(pages[1]) }
		if err := s.Drive(both, handoffWithin); err != nil {
			if !lostWakeUp(err, both) {
				return nil, 0, stuckVerdict(err)
			}
			waiting := pages[0]
			if p.begun(waiting) {
				waiting = pages[1]
			}
			return nil, 0, check.Failed("a connection free, a rebuild waiting", fmt.Sprintf("with the database's %d "+
				"connections busy, readers missed events %d and %d, and their rebuilds were stopped at the %s statement "+
				"of the shop's each reached (%s); meanwhile two other rebuilds' queries landed and gave their "+
				"connections back. Let go, the rebuild of event %d never began its query within %v of the shops' "+
				"clock with a connection free: a wake-up came while it was between seeing every connection busy and "+
				"waiting for one, and was lost (or kept as one where two came). Take a connection in one step that "+
				"waits for one too (a buffered channel of %d tokens, or golang.org/x/sync/semaphore), or look and "+
				"wait under one lock, in a loop (sync.Cond's Wait)", pool, pages[0], pages[1], ordinal(n),
				stoppedAt, waiting, handoffWithin, pool))
		}
		held = append(held, gates[:]...)
	}
	if swept == 0 {
		return nil, 0, check.Skipped("not staged: the reader of a page missed with every connection busy reached no " +
			"statement of the shop's on its way to its wait")
	}
	return held, swept, check.Passed("")
}

// lostWakeUp reports whether err, from driving the scene until done, says
// a rebuild still waits with a connection free: the drive ran out, or
// everything came to rest, deadlines included, with done still false.
func lostWakeUp(err error, done func() bool) bool {
	var st *harness.Stuck
	return errors.Is(err, errNoBound) || errors.As(err, &st) && st.Cause == harness.Deadlocked && !done()
}

// giveEach is Handoff's second scene, played on held, the gates of the
// pool's held queries, with no rebuild waiting. It returns how many
// statements it stopped the giver or its taker at.
func (p *heldPool) giveEach(h *harness.H, held []*harness.Gate) (int, check.Verdict) {
	s := p.s
	// waiter is a rebuild waiting for a connection; taker the query of a
	// page a connection went to.
	type waiter struct {
		page   int
		gate   *harness.Gate
		reader *harness.Crowd[string]
	}
	wait := func() (waiter, error) {
		page, gate := p.newPage()
		w := waiter{page, gate, s.read([]int{page})}
		return w, s.rest()
	}
	w, err := wait()
	if err != nil {
		return 0, stuckVerdict(err)
	}
	// The path from a held query's end to the waiter's query, in points.
	count := point.Count()
	v := h.Under(count, func() check.Verdict {
		p.mu.Lock()
		p.hits = count.Hits
		p.mu.Unlock()
		defer func() {
			p.mu.Lock()
			p.hits = nil
			p.mu.Unlock()
		}()
		held[0].Open()
		held = held[1:]
		if err := s.rest(); err != nil {
			return stuckVerdict(err)
		}
		return check.Passed("")
	})
	if !v.Pass {
		return 0, v
	}
	taken := func() bool { return p.begun(w.page) }
	if err := s.Drive(taken, handoffWithin); err != nil {
		if !lostWakeUp(err, taken) {
			return 0, stuckVerdict(err)
		}
		return 0, check.Failed("a connection free, a rebuild waiting", fmt.Sprintf("with the database's %d "+
			"connections busy and the rebuild of event %d waiting for one, another rebuild's query landed and gave "+
			"its connection back: the waiting rebuild never began its query within %v of the shops' clock. Wake "+
			"a waiter when a connection is given back (a buffered channel of %d tokens does)", pool, w.page,
			handoffWithin, pool))
	}
	p.mu.Lock()
	path := p.beganAt[w.page]
	p.mu.Unlock()
	held = append(held, w.gate)

	given := 0
	var next *waiter // the rebuild left waiting by the last round, if any
	for n := 1; n <= path; n++ {
		if next == nil || next.reader.Done() {
			if w, err = wait(); err != nil {
				return 0, stuckVerdict(err)
			}
		} else {
			w = *next
		}
		c, cGate := p.newPage() // the newcomer
		park := point.ParkAt(n)
		var parked int
		var stoppedAt string
		var reader *harness.Crowd[string]
		v := h.Under(park, func() check.Verdict {
			held[0].Open() // a rebuild lands and gives its connection back
			held = held[1:]
			if err := s.rest(); err != nil {
				return stuckVerdict(err)
			}
			parked = park.Parked()
			stoppedAt = park.ParkedWhere()
			reader = s.read([]int{c})
			if err := s.rest(); err != nil {
				return stuckVerdict(err)
			}
			park.Unpark()
			if err := s.rest(); err != nil {
				return stuckVerdict(err)
			}
			return check.Passed("")
		})
		if !v.Pass {
			return 0, v
		}
		if most := p.mostAtOnce(); most > pool {
			return 0, check.Failed(fmt.Sprintf("%d at once", most), fmt.Sprintf("with the database's %d connections "+
				"busy and the rebuild of event %d waiting for one, another rebuild's query landed, and the shop was "+
				"stopped at the %s statement it reached from there (%s) while a reader missed event %d. Let go, the "+
				"database had %d queries at once on a pool of %d: one connection given back went to two rebuilds. A "+
				"rebuild woken for a connection must look again whether one is free (wait in a for loop, as "+
				"sync.Cond's Wait asks), or take one in one step (a buffered channel of %d tokens)", pool, w.page,
				ordinal(n), stoppedAt, c, most, pool, pool))
		}
		one := func() bool { return p.begun(w.page) || p.begun(c) }
		if err := s.Drive(one, handoffWithin); err != nil {
			if !lostWakeUp(err, one) {
				return 0, stuckVerdict(err)
			}
			return 0, check.Failed("a connection free, two rebuilds waiting", fmt.Sprintf("with the database's %d "+
				"connections busy and the rebuild of event %d waiting for one, another rebuild's query landed, and "+
				"the shop was stopped at the %s statement it reached from there (%s) while a reader missed event %d. "+
				"Let go, neither rebuild began its query within %v of the shops' clock with a connection free: the "+
				"wake-up was lost. Take a connection in one step that waits for one too (a buffered channel of %d "+
				"tokens)", pool, w.page, ordinal(n), stoppedAt, c, handoffWithin, pool))
		}
		if parked > 0 {
			given++
		}
		// One of the two holds the connection now, its query held; the
		// other waits for the next round.
		if p.begun(w.page) {
			held = append(held, w.gate)
			next = &waiter{c, cGate, reader}
		} else {
			held = append(held, cGate)
			next = &w
		}
	}
	return given, check.Passed("")
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
