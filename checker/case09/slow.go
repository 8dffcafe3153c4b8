package case09

import (
	"fmt"
	"time"

	"stampede/checker/case06"
	"stampede/checker/check"
	"stampede/checker/harness"
)

// The stale path on the day the database is slow: a refresh slower than
// the lock still lands, so that the grace window ends with a fresh value
// rather than with a cold miss.
const (
	// slowRefresh is how long every query takes in SlowRefresh: the
	// contract's slowest (5 s) and its answer's 5 ms on the way, as case
	// 6's slow-query plays it, so that a refresh bounded at exactly 5 s
	// gives it up in every run.
	slowRefresh = 5005 * time.Millisecond
	// slowEvery is how often a stale reader comes meanwhile, on two
	// instances in turn, for slowFor.
	slowEvery = 250 * time.Millisecond
	slowFor   = 7 * time.Second
)

var slowRefreshInfo = check.Info{
	ID:   "slow-refresh",
	Name: "a refresh slower than the lock (the contract's slowest: 5 s, its answer 5 ms later) still lands: one rebuild read for the stale shelf, and the readers after it need none",
	Catches: "a background rebuild whose deadline is the lock's time to live and that does not keep its lock, so that on " +
		"the day the database is slow every refresh is given up and the next stale reader starts another " +
		"(wrong/refresh-ends-with-lock, the reference before): the shelf never refreshes, and at the physical expiry " +
		"the grace window ends in a cold miss; and a lock that lapses under a refresh still reading " +
		"(wrong/lock-lapses); also a refresh bounded at exactly 5 s (wrong/refresh-deadline-5s)",
}

// SlowRefresh checks that a refresh slower than the lock lands. The shelf
// is filled; from then on every query takes slowRefresh of the shops'
// clock. Just past the logical expiry a stale reader comes every
// slowEvery, on two instances in turn, for slowFor: each must be served
// the stale list at once, and the fleet must read the source once in all
// that time: the refresh the first one set going, which lands after
// slowRefresh and leaves the readers after it nothing to rebuild.
func SlowRefresh(h *harness.H, newShop NewShop) check.Verdict {
	sc, fail := filledScene(h, newShop, 2)
	if sc == nil {
		return fail
	}
	defer sc.Close()
	// A refresh bounded at exactly 5 s and its answer 5 ms later must
	// each wake at its own time, not together in one tick.
	sc.Clock.Exact()
	sc.db.Slow(slowRefresh, sc.Hold)
	before := sc.Reads()
	for at := stale; at < stale+slowFor; at += slowEvery {
		if err := sc.until(at); err != nil {
			return case06.StuckVerdict(err)
		}
		if v := sc.servedAtOnce(int(at/slowEvery)%2, at, "with the database slow"); !v.Pass {
			return v
		}
		if n := sc.Reads() - before; n > 1 {
			return check.Failed(count(n, "rebuild read"), fmt.Sprintf("every query took %v from the fill on. At %s a "+
				"stale reader set a refresh going; by %s the fleet had read the source %d times for the one stale shelf: "+
				"each refresh was given up, or its lock passed on, before its query answered, and the next stale "+
				"reader started another. A refresh keeps its lock while it reads (renew it, only while it holds your "+
				"token, in one step), and gives its query the contract's 5 s at least: otherwise the shelf never "+
				"refreshes while the database is slow, and the grace window ends in a cold miss", slowRefresh,
				sc.at(stale), sc.at(at), n))
		}
	}
	if err := sc.settled(); err != nil {
		return case06.StuckVerdict(err)
	}
	if sc.Reads() == before {
		return noRebuild(sc, "refresh to land")
	}
	return check.Passed(fmt.Sprintf("1 rebuild read of %v for %d stale readers in %v", slowRefresh,
		int(slowFor/slowEvery), slowFor))
}
