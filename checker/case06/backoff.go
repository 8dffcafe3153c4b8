package case06

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"stampede/checker/check"
	"stampede/checker/fleet"
	"stampede/checker/harness"
	"stampede/shop/catalog"
)

// failsFastInfo is case 6's check of a fleet whose database fails every
// query at once.
var failsFastInfo = check.Info{
	ID: "fails-fast",
	Name: "with the database failing every query at once, the fleet backs off: while 20 visitors a second come, it " +
		"queries no more often than once per healthy rebuild (0.2 s), each visitor gets an error within its " +
		"budget, and once the database answers again a visitor gets the list within 11 s",
	Catches: "a flight that lets go of its lock as soon as its query fails, so that the next visitor on any " +
		"instance starts a flight that queries the failing database again, one query per visitor " +
		"(wrong/release-after-failure, the reference until the lab's issue 25); a flight that retries at once " +
		"(wrong/retry-nobackoff); and a failure remembered for longer than any lock (wrong/failure-cached)",
}

const (
	// FailFor is how long FailsFast's database fails, and FailEvery how
	// far apart a visitor comes to each of its two instances: 20 visitors
	// a second, many more than the queries a backed-off fleet sends.
	FailFor   = 10 * time.Second
	FailEvery = 100 * time.Millisecond
	// QueryGap is the mean gap FailsFast asks between the fleet's queries
	// to a failing database: a healthy rebuild's time, so that a database
	// in trouble gets no more queries than a fleet rebuilding back to back
	// sends a healthy one. Keeping the lock for its time to live after a
	// failure (which the contract makes more than a rebuild) gives that;
	// so does an instance that waits a second before it tries again.
	QueryGap = catalog.QueryCost
)

// FailsFast checks that a database that fails fast is backed off from.
// Redis is empty and every query fails at once; for 10 s a visitor comes
// to each of two instances every 100 ms, and each visitor must get an
// error within the checker's longest budget. The fleet may query the
// database no more than once per 0.2 s of the time that passed (and two
// to spare). Then the database answers again; within the longest lock
// the checker accepts and a second, a visitor must get the list. It catches a lock
// released after a failed query, which turns each visitor into a query,
// and a retry with no pause.
func FailsFast(h *harness.H, newShop NewShop) check.Verdict {
	sc, err := newHungFleet(h, newShop, 2)
	if err != nil {
		return fleet.Unreachable(err)
	}
	defer sc.Close()
	sc.db.Fail(errDatabaseDown)
	start := sc.Clock.Now()
	var crowds []*harness.Crowd[[]string]
	for range int(FailFor / FailEvery) {
		crowds = append(crowds, sc.visit(0, 1), sc.visit(1, 1))
		if err := sc.Elapse(FailEvery); err != nil {
			return stuckVerdict(err)
		}
	}
	if err := sc.Drive(func() bool { return fleet.AllDone(crowds) }, maxBudget); err != nil {
		if errors.Is(err, fleet.ErrNoBound) || NoTimer(err) {
			return check.Failed(fmt.Sprintf("waiting after %v", maxBudget), fmt.Sprintf("the database failed "+
				"every query at once, and visitors came to two instances for %v; %v after the last, some were still "+
				"waiting: %s. A visitor's wait is bounded when the database fails too: answer with its error or a "+
				"*TryAgain", FailFor, maxBudget, strings.Join(sc.Places(), "; ")))
		}
		return stuckVerdict(err)
	}
	elapsed := sc.Clock.Now().Sub(start)
	queries := sc.Reads()
	visitors := len(crowds)
	figure := fmt.Sprintf("%s in %v for %d visitors", count(queries, "source read"), elapsed.Round(time.Millisecond), visitors)
	if most := int(elapsed/QueryGap) + 2; queries > most {
		return check.Failed(figure, fmt.Sprintf("the database failed every query at once (%v), and %d visitors "+
			"came to two instances in %v; the fleet sent it %d queries, more than one per %v (%d). A failed query "+
			"says the database is in trouble: back off from it. Keep the lock after a failure until it expires "+
			"(the whole fleet then waits, and queries once per lock), or have the instance wait before it tries "+
			"again; a lock let go at once, or a retry with no pause, sends one query per visitor to a database that "+
			"cannot answer them", errDatabaseDown, visitors, FailFor, queries, QueryGap, most))
	}
	for i, o := range outcomes(crowds) {
		switch {
		case o.Panic != "":
			return check.Failed(figure, fmt.Sprintf("with the database failing, visitor %d's call panicked: %s", i+1, o.Panic))
		case o.Err == nil:
			return check.Failed(figure, fmt.Sprintf("with the database failing every query, visitor %d got %q and "+
				"no error", i+1, o.Value))
		}
	}
	if queries == 0 {
		return check.Skipped("not staged: the fleet never queried the database, so it never saw it fail")
	}

	// The database answers again: within the longest lock, the fleet
	// must serve the list.
	sc.db.Fail(nil)
	healed := sc.Clock.Now()
	books := catalog.Books(catalog.Bestsellers)
	var after []*harness.Crowd[[]string]
	for k := 0; ; k++ {
		served := slices.ContainsFunc(outcomes(after), func(o harness.Outcome[[]string]) bool {
			return o.Err == nil && slices.Equal(o.Value, books)
		})
		if served {
			break
		}
		if waited := sc.Clock.Now().Sub(healed); waited > maxLockTTL+time.Second {
			return check.Failed(figure+"; no list after the database came back", fmt.Sprintf("the database failed "+
				"for %v, then answered again; visitors kept coming to two instances, and %v later none had got the "+
				"list. A failure may be remembered as a backoff, but for no longer than the longest lock (%v): the "+
				"database's trouble is over, and the shop still refuses", FailFor, waited.Round(time.Millisecond),
				maxLockTTL))
		}
		after = append(after, sc.visit(k%2, 1))
		if err := sc.Elapse(FailEvery); err != nil {
			return stuckVerdict(err)
		}
	}
	return check.Passed(fmt.Sprintf("%s, each told of the error; the list %v after the database came back",
		figure, sc.Clock.Now().Sub(healed).Round(time.Millisecond)))
}

// outcomes is every outcome of crowds whose visitors have all returned,
// in order.
func outcomes(crowds []*harness.Crowd[[]string]) []harness.Outcome[[]string] {
	var all []harness.Outcome[[]string]
	for _, c := range crowds {
		if c.Done() {
			all = append(all, c.Outcomes()...)
		}
	}
	return all
}
