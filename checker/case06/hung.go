package case06

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"stampede/checker/check"
	"stampede/checker/fleet"
	"stampede/checker/harness"
	"stampede/shop/catalog"
	"stampede/shop/clock"
)

// coldBoundedInfo is case 6's check of a fleet whose database hangs.
var coldBoundedInfo = check.Info{
	ID: "cold-bounded",
	Name: "with the database hung, readers who find nothing get an error within 10 s on every instance, the lock " +
		"holder's too, or at their own deadline if it comes first; no flight's query outlives its lock",
	Catches: "a flight detached from its visitors with no deadline of its own, whose readers wait until their own " +
		"contexts end and whose query stays open for as long as the database hangs (wrong/flight-nodeadline, the " +
		"reference until the lab's issue 25), a flight whose deadline outlives its lock, so that another instance " +
		"takes the expired lock and queries beside it (wrong/flight-deadline-past-lock), a watchdog that renews " +
		"the lock of a flight with no deadline (wrong/watchdog), and readers who wait for the flight past their " +
		"own context's end (wrong/flight-ignores-leaver)",
}

const (
	// HungFor is how long ColdBounded's cold readers keep coming with the
	// database hung, and HungEvery how far apart: six of the reference's
	// 2 s locks, with readers all through each. Case 9's background
	// rebuild plays the same rhythm.
	HungFor   = 12 * time.Second
	HungEvery = 250 * time.Millisecond
	// LongestWork is the longest a flight's query, or any detached work,
	// may stay open: the longest lock the checker accepts, which a holder
	// may keep alive.
	LongestWork = 10 * time.Second
)

// hungFleet is a fleet whose database follows a Plan.
type hungFleet struct {
	*Fleet
	db *Plan
}

// newHungFleet starts n instances whose queries follow a fresh plan.
func newHungFleet(h *harness.H, newShop NewShop, n int) (*hungFleet, error) {
	p := NewPlan()
	f, err := NewFleet(h, fleet.ServerURL(), newShop, n, 0, p.Hook)
	if err != nil {
		return nil, err
	}
	p.SetClock(f.Clock)
	return &hungFleet{Fleet: f, db: p}, nil
}

// Close lets every held query go, then closes the fleet.
func (sc *hungFleet) Close() {
	sc.db.Open()
	sc.Fleet.Close()
}

// visit starts n visitors of one instance. Each visitor's context ends when
// the visitor leaves, as a request's does when its handler returns.
func (sc *hungFleet) visit(instance, n int) *harness.Crowd[[]string] {
	return sc.VisitWith(n, func(ctx context.Context, _ int) ([]string, error) {
		ctx, leave := context.WithCancel(ctx)
		defer leave()
		return sc.shops[instance].Top(ctx, catalog.Bestsellers)
	})
}

// settled lets whatever runs come to rest, without moving the clock.
func (sc *hungFleet) settled() error {
	return sc.Drive(func() bool { return true }, 0)
}

// ColdBounded checks that, with the database hung and Redis empty, every
// reader who finds nothing gets an answer in time, on every instance, and
// that no flight's query outlives its lock. Shop-1's three readers share
// its flight, which takes the lock; a fourth, whose own deadline is 100 ms
// away, must return at that deadline; shop-2's reader loses the lock. All
// must return an error within the checker's longest budget. Then a cold
// reader comes every quarter second for 12 s, on the two instances in
// turn: no two of the shelf's queries may be open at once, and none for
// longer than 10 s. It catches readers that wait for the flight on their
// own context only, behind a query with no deadline; readers that wait
// for the flight alone, past their own context's end; a flight whose query
// outlives every reader; and one whose deadline is longer than its lock,
// so that another instance's flight takes the expired lock and queries
// beside it.
func ColdBounded(h *harness.H, newShop NewShop) check.Verdict {
	sc, err := newHungFleet(h, newShop, 2)
	if err != nil {
		return fleet.Unreachable(err)
	}
	defer sc.Close()
	sc.db.Hold()
	holder := sc.visit(0, 3)
	if err := sc.settled(); err != nil {
		return stuckVerdict(err)
	}
	if n, _ := sc.db.Waiting(); n == 0 {
		return check.Failed("no query", "with Redis empty, shop-1's three readers sent the database no query")
	}
	hurried := sc.VisitWith(1, func(ctx context.Context, _ int) ([]string, error) {
		ctx, cancel := clock.WithTimeout(ctx, sc.Clock, Hurry)
		defer cancel()
		return sc.shops[0].Top(ctx, catalog.Bestsellers)
	})
	loser := sc.visit(1, 1)
	start := sc.Clock.Now()
	err = sc.Drive(hurried.Done, Hurry)
	if errors.Is(err, fleet.ErrNoBound) || NoTimer(err) {
		return check.Failed(fmt.Sprintf("waiting past its deadline of %v", Hurry), fmt.Sprintf("the database hung; "+
			"shop-1's flight held the lock, and a reader of shop-1 whose own deadline was %v away joined it. It was "+
			"still waiting after its deadline had passed: a reader waits for the flight or for its own context, "+
			"whichever ends first (a select with both), and returns its context's error", Hurry))
	}
	if err != nil {
		return stuckVerdict(err)
	}
	if o := hurried.Outcomes()[0]; o.Err == nil || o.Panic != "" {
		return check.Failed("", fmt.Sprintf("the reader whose deadline passed got %q (panic: %q), not an error", o.Value, o.Panic))
	}
	err = sc.Drive(func() bool { return holder.Done() && loser.Done() }, maxBudget)
	waited := sc.Clock.Now().Sub(start).Round(time.Millisecond)
	if errors.Is(err, fleet.ErrNoBound) || NoTimer(err) {
		who := "shop-1's readers, on the instance whose flight held the lock,"
		if holder.Done() {
			who = "shop-2's reader, which lost the lock,"
		}
		return check.Failed(fmt.Sprintf("waiting after %v", maxBudget), fmt.Sprintf("the database hung, and with nothing "+
			"in Redis %s were still waiting, %v of the shops' clock after they came. Every reader's wait is bounded, on "+
			"every instance: give the flight others wait for a deadline on the clock New is given, no longer than its "+
			"lock (clock.WithTimeout on context.WithoutCancel), or bound the wait itself, and answer with an error "+
			"(a *TryAgain) past it", who, maxBudget))
	}
	if err != nil {
		return stuckVerdict(err)
	}
	for i, o := range append(holder.Outcomes(), loser.Outcomes()...) {
		switch {
		case o.Panic != "":
			return check.Failed("", fmt.Sprintf("reader %d's call panicked: %s", i+1, o.Panic))
		case o.Err == nil:
			return check.Failed("", fmt.Sprintf("reader %d got %q, though the database never answered", i+1, o.Value))
		}
	}
	// The cold readers keep coming.
	var crowds []*harness.Crowd[[]string]
	for k := range int(HungFor / HungEvery) {
		if err := sc.Elapse(HungEvery); err != nil {
			return stuckVerdict(err)
		}
		crowds = append(crowds, sc.visit(k%2, 1))
		if err := sc.settled(); err != nil {
			return stuckVerdict(err)
		}
		open, oldest := sc.db.Waiting()
		if oldest > LongestWork {
			return sc.coldTooLong(oldest, sc.Clock.Now().Sub(start))
		}
		if open > 1 {
			return check.Failed(fmt.Sprintf("%d queries open at once", open), fmt.Sprintf("the database hung, with "+
				"nothing in Redis, and cold readers came every %v on two instances. %v after the first, %d of the "+
				"shelf's queries were open at once: a flight's query outlived its lock, and another instance's flight "+
				"took the expired lock and queried beside it. A flight's deadline is no longer than its lock",
				HungEvery, sc.Clock.Now().Sub(start).Round(time.Millisecond), open))
		}
	}
	if err := sc.Drive(func() bool { return fleet.AllDone(crowds) }, maxBudget); err != nil {
		if errors.Is(err, fleet.ErrNoBound) || NoTimer(err) {
			return check.Failed(fmt.Sprintf("waiting after %v", maxBudget), fmt.Sprintf("the database hung, with "+
				"nothing in Redis, and cold readers came every %v for %v; %v after the last, some were still waiting: %s",
				HungEvery, HungFor, maxBudget, strings.Join(sc.Places(), "; ")))
		}
		return stuckVerdict(err)
	}
	if err := sc.Elapse(LongestWork); err != nil {
		return stuckVerdict(err)
	}
	if _, oldest := sc.db.Waiting(); oldest > LongestWork {
		return sc.coldTooLong(oldest, sc.Clock.Now().Sub(start))
	}
	return check.Passed(fmt.Sprintf("the first readers answered within %v, the hurried one at its deadline; "+
		"then %d cold readers, never two queries open at once", waited, len(crowds)))
}

// Hurry is the deadline of ColdBounded's hurried reader, and of case 9's
// stalled-lock.
const Hurry = 100 * time.Millisecond

// NoTimer reports whether err says that the visitors wait with nothing
// asleep on the shops' clock: for a hung query, with no bound at all.
func NoTimer(err error) bool {
	var stuck *harness.Stuck
	return errors.As(err, &stuck) && stuck.Cause == harness.Deadlocked
}

// coldTooLong fails ColdBounded when a flight's query has waited for the
// hung database longer than any detached work may run.
func (sc *hungFleet) coldTooLong(oldest, since time.Duration) check.Verdict {
	return check.Failed(fmt.Sprintf("a read open for %v", oldest.Round(time.Millisecond)), fmt.Sprintf("the database "+
		"hung, with nothing in Redis; %v after the first reader came, a flight's query had waited for it for %v. A "+
		"flight that outlives its first reader needs a deadline of its own, on the clock New is given, no longer "+
		"than its lock (at most %v): with none it holds a query and a goroutine for as long as the database hangs",
		since.Round(time.Millisecond), oldest.Round(time.Millisecond), LongestWork))
}
