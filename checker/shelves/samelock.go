package shelves

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"

	"stampede/checker/check"
	"stampede/checker/harness"
	"stampede/shop/catalog"
)

// SameLockRounds is how many fresh shops SameLock tries. Each round is a
// new chance to catch two visitors making two locks for one shelf; a right
// answer makes one query in every round, whatever the schedule.
const SameLockRounds = 200

// SameLock checks that visitors who ask for a cold shelf at the same
// instant end up behind one lock, or one flight: while the first query is
// held at a gate, no second query of that shelf may start.
//
// It catches a table of locks that makes a new lock for a visitor who
// already has one, and a table that looks for the lock in one critical
// section and stores a new one in another: two visitors can both miss, make
// a lock each, and both query. That second mistake has no data race, and
// shows only when two visitors look at the table within the same few
// hundred nanoseconds. So each round starts a fresh shop and releases as
// many visitors as there are processors from a spinning barrier, so that
// they all reach the table at the same moment, each on its own processor.
// The verdict is a count, never a duration: the number of queries that
// started while the first was held. A right answer makes one in every
// round; the mistake is caught in the rounds where the schedule lets it
// show (on one processor, it may never show).
func SameLock(h *harness.H, newShop New) check.Verdict {
	shelves := catalog.Shelves()
	n := max(2, runtime.GOMAXPROCS(0))
	for round := range SameLockRounds {
		shelf := shelves[round%len(shelves)]
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
		q := db.Queries(shelf)
		gate.Open()
		if err == nil {
			err = crowd.Wait()
		}
		if err != nil {
			return Stuck(err)
		}
		if p := crowd.Panicked(); p != "" {
			return check.Failed("", "a visitor's call panicked: "+p)
		}
		figure := fmt.Sprintf("round %d of %d: %d queries at once", round+1, SameLockRounds, q)
		switch {
		case q > 1:
			return check.Failed(figure, fmt.Sprintf(
				"%d visitors asked for %s at the same instant and %d of them were in the database together: "+
					"they held different locks for the same shelf (is the lock looked up in one critical section and stored in another?)",
				n, shelf, q))
		case q == 0:
			return check.Failed(figure, "the list must come from the database, once")
		}
		if v := AllGot(crowd.Outcomes(), catalog.Books(shelf)); !v.Pass {
			return v
		}
	}
	return check.Passed(fmt.Sprintf("%d rounds, one query each", SameLockRounds))
}
