package case08

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"stampede/checker/check"
	"stampede/checker/fleet"
	"stampede/checker/harness"
	"stampede/shop/events"
)

// The checks in this file stage the faults a cache in front of a database
// lives with: a database that hangs, and a Redis that will not store.

// The hung database's sizes and bounds.
const (
	// hungPages is how many pages' queries hang: as many as the pool has
	// connections, so that rebuilds that keep a hung query for ever hold
	// every connection.
	hungPages = pool
	// latePage is one more page the database hangs, whose reader comes
	// with the pool already full of hung queries: its rebuild waits for a
	// connection before it queries, and the wait counts in its bound.
	latePage = hungPages + 1
	// healthyPages is how many pages the database still answers, read
	// while the others hang.
	healthyPages = 5
	// maxRebuild is the longest a rebuild may keep a query open (the
	// contract's bound).
	maxRebuild = 10 * time.Second
	// hungFor is how long the hung scene lasts on the shop's clock: a
	// rebuild's longest, and then a budget for the readers who come back.
	hungFor = maxRebuild + maxBudget
	// comeBack is how long a reader told to try again waits before it does.
	comeBack = time.Second
	// stagger is how long after the hung pages' readers the healthy pages'
	// come.
	stagger = 100 * time.Millisecond
)

// errStopped ends a hung query when its scene is over.
var errStopped = errors.New("the scene is over (planned by the checker)")

// openQueries is what the hung database tells of its queries: how many are
// open now, and how long after from (when their readers came) the last of
// them was open. Every reader of a hung page comes at from, so that span is
// the longest any rebuild of one kept querying it, retries and all.
type openQueries struct {
	mu      sync.Mutex
	from    time.Time
	started map[int]time.Time // by query number
	next    int
	longest time.Duration
}

// begin notes a query opened at t and returns its number.
func (q *openQueries) begin(t time.Time) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.started == nil {
		q.started = map[int]time.Time{}
	}
	q.next++
	q.started[q.next] = t
	return q.next
}

// end notes that query n ended at t.
func (q *openQueries) end(n int, t time.Time) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.longest = max(q.longest, t.Sub(q.from))
	delete(q.started, n)
}

// at says, at now, how many queries are open, and how long after from the
// last of them was open, ended or not.
func (q *openQueries) at(now time.Time) (open int, longest time.Duration) {
	q.mu.Lock()
	defer q.mu.Unlock()
	longest = q.longest
	if len(q.started) > 0 {
		longest = max(longest, now.Sub(q.from))
	}
	return len(q.started), longest
}

// HungQuery checks that a rebuild gives a hung query up. The database hangs
// every query of events 1 to 21, until the query's context ends; one reader
// comes for each of the first 20, so that their rebuilds take every
// connection of the pool. Then event 21's reader comes, whose rebuild must
// wait for a connection, and readers of five other pages, which the
// database answers at once, come and come back a second after each "try
// again" for 20 s of the shop's clock. No hung page may still be queried
// 10 s after its reader
// came, and each of the five must get its page. It catches a rebuild with
// no deadline (20 hung queries hold the pool for ever, and every other page
// is "try again"), a deadline on the wait for a connection only, a deadline
// longer than 10 s, a flight that stops waiting for a query it leaves
// running, and a rebuild that retries with a fresh deadline for each try.
func HungQuery(h *harness.H, newShop NewShop) check.Verdict {
	var q, late openQueries
	stop := make(chan struct{})
	hook := func(s *scene, ctx context.Context, id int) error {
		if id > latePage {
			return nil
		}
		on := &q
		if id == latePage {
			on = &late
		}
		n := on.begin(s.clk.Now())
		defer func() { on.end(n, s.clk.Now()) }()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-stop:
			return errStopped
		}
	}
	s, err := newSceneWith(h, newShop, false, hook, nil)
	if err != nil {
		return fleet.Unreachable(err)
	}
	defer s.Close()
	defer close(stop)
	q.from = s.clk.Now()
	s.read(events.IDs(hungPages))
	if err := s.rest(); err != nil {
		return stuckVerdict(err)
	}
	if open, _ := q.at(s.clk.Now()); open == 0 {
		return check.Failed("", fmt.Sprintf("%d readers of pages the database hangs came, and none of their queries reached "+
			"the database", hungPages))
	}
	// The healthy pages' readers come a moment later, so that their
	// rebuilds' deadlines never fall in the instant the hung ones' do:
	// which of the two a rebuild waiting for a connection sees first would
	// be the scheduler's choice.
	if err := s.Elapse(stagger); err != nil {
		return stuckVerdict(err)
	}
	start := s.clk.Now()
	late.from = start
	lateReader := s.visit(1, func(ctx context.Context, _ int) (string, error) { return s.shop.Page(ctx, latePage) })
	healthy := s.visit(healthyPages, func(ctx context.Context, i int) (string, error) {
		for {
			page, err := s.shop.Page(ctx, latePage+1+i)
			if err == nil || s.clk.Now().Sub(start) >= hungFor {
				return page, err
			}
			if err := s.clk.Sleep(ctx, comeBack); err != nil {
				return "", err
			}
		}
	})
	err = s.Drive(func() bool {
		open, _ := q.at(s.clk.Now())
		lateOpen, _ := late.at(s.clk.Now())
		return healthy.Done() && lateReader.Done() && open+lateOpen == 0
	}, hungFor+comeBack)
	now := s.clk.Now()
	open, longest := q.at(now)
	lateOpen, lateLongest := late.at(now)
	// A scene that came to rest with nothing asleep on the clock and hung
	// queries open will never end them: that is the verdict, not a stuck
	// scene.
	if err != nil && !errors.Is(err, errNoBound) && open == 0 {
		return stuckVerdict(err)
	}
	figure := fmt.Sprintf("hung pages queried for %v", longest)
	switch {
	case open > 0 && err != nil && !errors.Is(err, errNoBound):
		return check.Failed(fmt.Sprintf("%d hung queries open, nothing to end them", open), fmt.Sprintf(
			"the database hung the queries of events 1 to %d, and %v later %d of them were still open, each holding a "+
				"connection, with nothing asleep on the shop's clock that could end them: give every query a deadline "+
				"of its own, no longer than %v, on the clock New is given (clock.WithTimeout)", hungPages, now.Sub(q.from),
			open, maxRebuild))
	case open > 0:
		return check.Failed(fmt.Sprintf("%d hung queries still open after %v", open, now.Sub(q.from)), fmt.Sprintf(
			"the database hung the queries of events 1 to %d, and after %v of the shop's clock %d of them were still open, "+
				"each holding a connection of the pool: a flight that outlives its readers (context.WithoutCancel) needs "+
				"a deadline of its own, no longer than %v, on the clock New is given (clock.WithTimeout), for its wait for "+
				"a connection and its query alike; past it, give the connection back and return the error",
			hungPages, now.Sub(q.from), open, maxRebuild))
	case longest > maxRebuild:
		return check.Failed(figure, fmt.Sprintf("the pages the database hung were still queried %v after their "+
			"readers came, and a rebuild gives up within %v of its start, retries and all: one deadline for the whole "+
			"rebuild, not a fresh one for each try. A connection held that long is one the pages the database would "+
			"answer cannot have", longest, maxRebuild))
	case lateOpen > 0 || lateLongest > maxRebuild:
		return check.Failed(fmt.Sprintf("event %d queried for %v", latePage, lateLongest), fmt.Sprintf("event %d's "+
			"reader came %v after the pool had filled with hung queries, so its rebuild waited for a connection, and "+
			"then its query hung too: it was still open %v after its reader came, past the %v a rebuild may last. "+
			"One deadline bounds the whole rebuild, its wait for a connection and its query together, not a deadline "+
			"for each", latePage, stagger, lateLongest, maxRebuild))
	}
	if v := allGot(healthy.Outcomes(), healthyIDs()); !v.Pass {
		return check.Failed(v.Figure, fmt.Sprintf("while the database hung %d pages' queries, and for %v of the shop's "+
			"clock, with each reader coming back a second after \"try again\": %s. The hung pages' queries were over "+
			"%v after their readers came: once they are, the pages the database answers must be served (a connection "+
			"given back on every path, a deadline made for each rebuild, not one shared or already spent)",
			hungPages, hungFor, v.Message, longest))
	}
	lateFigure := "never queried"
	if lateLongest > 0 {
		lateFigure = fmt.Sprintf("given up within %v of its reader", lateLongest)
	}
	return check.Passed(fmt.Sprintf("%d hung pages given up within %v, event %d %s, %d other pages served",
		hungPages, longest, latePage, lateFigure, healthyPages))
}

// healthyIDs are the pages the hung database still answers.
func healthyIDs() []int {
	ids := make([]int, healthyPages)
	for i := range ids {
		ids[i] = latePage + 1 + i
	}
	return ids
}

// The refused writes' scene: pages, each with perPage readers.
const refusedPages = 20

// errReadOnly is the answer of a Redis that will not store: a replica, say,
// that a failover has not yet promoted.
var errReadOnly = errors.New("READONLY You can't write against a read only replica. (planned by the checker)")

// StoreRefused checks that a page the database gave is served even when
// Redis refuses to store it. Every command that writes is answered with
// READONLY, as a replica answers; reads go through. A cold start of 20
// pages with 3 readers each, then one more reader per page: every reader
// must get its page. It catches a rebuild that turns a failed SET into the
// readers' error, throwing a good page away, and one that returns the
// error with the page.
func StoreRefused(h *harness.H, newShop NewShop) check.Verdict {
	var refused atomic.Int64
	t := fleet.NewTap(nil)
	t.Fail(func(c fleet.Command) bool {
		// A command that names no key (the connection's HELLO, say) goes
		// through, as one that only reads does. A pipeline that carries
		// a write is refused whole.
		if len(c.Keys) == 0 || fleet.ReadOnly(c.Name) {
			return false
		}
		refused.Add(1)
		return true
	}, errReadOnly, -1)
	s, err := newSceneOn(h, newShop, t, false, nil)
	if err != nil {
		return fleet.Unreachable(err)
	}
	defer s.Close()
	ids := coldIDs(refusedPages, perPage)
	first := s.read(ids)
	if err := s.Drive(first.Done, patience); err != nil {
		return waitVerdict(err, "the readers of the cold start were")
	}
	if refused.Load() == 0 {
		return check.Skipped("not staged: the shop wrote nothing to Redis in a cold start, so no write could be refused " +
			"(see once)")
	}
	why := "Redis refused every write (READONLY, as a replica does), and "
	fix := ": the page came from the database and is good, so serve it; storing it is the cache's business, and the " +
		"next reader's rebuild tries again"
	if v := allGot(first.Outcomes(), ids); !v.Pass {
		return check.Failed(v.Figure, why+v.Message+fix)
	}
	again := s.read(events.IDs(refusedPages))
	if err := s.Drive(again.Done, patience); err != nil {
		return waitVerdict(err, "the readers after the cold start were")
	}
	if v := allGot(again.Outcomes(), events.IDs(refusedPages)); !v.Pass {
		return check.Failed(v.Figure, why+"after the cold start "+v.Message+fix)
	}
	return check.Passed(fmt.Sprintf("%d readers served while Redis refused %s", len(ids)+refusedPages,
		count(int(refused.Load()), "write", "writes")))
}
