package shelves

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"

	"stampede/checker/check"
	"stampede/checker/harness"
	"stampede/checker/point"
	"stampede/shop/catalog"
)

// SameLockRounds is how many fresh shops SameLock tries with its
// visitors released together from a spinning barrier. Each round is a new
// chance to catch two visitors making two locks for one shelf where no
// schedule point can stand (inside the runtime's map code); a right answer
// makes one query in every round, whatever the schedule.
const SameLockRounds = 200

// SameLock checks that visitors who ask for a cold shelf at the same
// instant end up behind one lock, or one flight: while the first query is
// held at a gate, no second query of that shelf may start.
//
// It catches a table of locks that makes a new lock for a visitor who
// already has one, and a table that looks for the lock in one critical
// section and stores a new one in another: two visitors can both miss, make
// a lock each, and both query. That second mistake has no data race, and
// shows only when two visitors look at the table before either stores, a
// gap between two adjacent statements of the student's code. So the first
// two rounds play the visitors in lockstep (point.Lockstep), taking turns
// one statement each, in both orders: both look before either stores, in
// every run. The first of them then holds the query for the story's time
// (Linger), so that a visitor who stops waiting on a timer of its own and
// queries, or answers an error, is seen doing it. The rounds after them
// release as many visitors as there are
// processors from a spinning barrier, with no schedule, so that they reach
// the table at the same moment, each on its own processor. The verdict is
// a count, never a duration: the number of queries that started while the
// first was held. A right answer makes one in every round.
func SameLock(h *harness.H, newShop New) check.Verdict {
	shelves := catalog.Shelves()
	for _, reverse := range []bool{false, true} {
		round := 0
		if reverse {
			round = 1
		}
		v := h.Under(point.Lockstep(reverse), func() check.Verdict {
			return sameLockRound(h, newShop, shelves[round%len(shelves)], 2, !reverse, fmt.Sprintf("lockstep round %d of 2", round+1))
		})
		if !v.Pass {
			return v
		}
	}
	// The grader gives a check one processor (grade's checkProcs); these
	// rounds want every processor the machine has, and at least two.
	n := max(2, runtime.NumCPU())
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(n))
	for round := range SameLockRounds {
		shelf := shelves[round%len(shelves)]
		if v := sameLockRound(h, newShop, shelf, n, false, fmt.Sprintf("round %d of %d", round+1, SameLockRounds)); !v.Pass {
			return v
		}
	}
	return check.Passed(fmt.Sprintf("2 rounds in lockstep and %d at once, one query each", SameLockRounds))
}

// sameLockRound plays one round of SameLock: n visitors of a fresh shop
// ask for shelf together, its first query held at a gate, for the story's
// time if linger is set.
func sameLockRound(h *harness.H, newShop New, shelf string, n int, linger bool, name string) check.Verdict {
	gate := harness.NewGate()
	db := catalog.New(catalog.WithCost(0), catalog.WithHook(gate.Hold(shelf)))
	shop := newShop(db)
	var arrived atomic.Int64
	crowd := harness.Visit(h, n, func(ctx context.Context, _ int) ([]string, error) {
		arrived.Add(1)
		for spins := 0; arrived.Load() < int64(n); spins++ {
			if spins > 1<<12 { // the others are not running: let them
				runtime.Gosched()
			}
		}
		return shop.Top(ctx, shelf)
	})
	// Counted once everyone has arrived and the first query has begun
	// (or everyone has left without one), and all have settled.
	err := h.Settled(func() bool {
		return arrived.Load() == int64(n) && (db.Queries(shelf) > 0 || crowd.Done())
	})
	if err == nil && linger {
		err = Linger(h)
	}
	q := db.Queries(shelf)
	gate.Open()
	if v := finished(err, crowd); !v.Pass {
		return v
	}
	figure := fmt.Sprintf("%s: %d queries at once", name, q)
	switch {
	case q > 1:
		return check.Failed(figure, fmt.Sprintf(
			"%d visitors asked for %s at the same instant and %d of them were in the database together: "+
				"they held different locks for the same shelf (is the lock looked up in one critical section and stored in another?), "+
				"or one stopped waiting for the other's query on a timer of its own",
			n, shelf, q))
	case q == 0:
		return check.Failed(figure, "the list must come from the database, once")
	}
	return AllGot(crowd.Outcomes(), catalog.Books(shelf))
}
