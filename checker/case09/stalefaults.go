package case09

import (
	"fmt"
	"strings"
	"time"

	"stampede/checker/case06"
	"stampede/checker/check"
	"stampede/checker/fleet"
	"stampede/checker/harness"
	"stampede/shop/catalog"
)

// The stale path under Redis's and the driver's faults: writes Redis
// refuses, and a query that panics in the background rebuild.

// readOnlyInfo is the check of the stale path while Redis refuses writes.
var readOnlyInfo = check.Info{
	ID: "redis-readonly",
	Name: "while Redis refuses writes (every write in a failover, or only the list's), every stale reader is " +
		"served the stale list at once, and the fleet sends the database at most one query a second",
	Catches: "a refused lock attempt taken as a win, so that every stale reader rebuilds; a refused lock attempt " +
		"handed to the reader as its error, though the stale list was in hand; and a rebuild that lets go of its " +
		"lock when Redis refuses the list it read, so that the next reader queries again",
}

// readOnlyFor is how long each of ReadOnly's scenes lasts: half of
// Backoff's, as two scenes are played; and mostReadOnly the queries it may
// send the database meanwhile, one a second.
const (
	readOnlyFor  = failingFor / 2
	mostReadOnly = int(readOnlyFor/time.Second) + 1
)

// ReadOnly checks the stale path while Redis refuses writes. In the first
// scene every write any instance sends is refused from before the logical
// expiry on (READONLY, as during a failover); in the second, only the
// writes that carry the list are (the lock works). For 5 s a stale reader
// comes every 50 ms on four instances in turn, and each must be served the
// stale list at once; the fleet may send the database at most one query a
// second. It catches a lock attempt whose error is taken as a win, one
// whose error becomes the reader's, and a rebuild that releases its lock
// when the list's write is refused.
func ReadOnly(h *harness.H, newShop NewShop) check.Verdict {
	title := catalog.Books(catalog.Bestsellers)[0]
	failover := func(c fleet.Command) bool { return len(c.Keys) > 0 && !fleet.ReadOnly(c.Name) }
	listOnly := func(c fleet.Command) bool {
		if fleet.ReadOnly(c.Name) {
			return false
		}
		for _, a := range c.Args {
			if strings.Contains(a, title) {
				return true
			}
		}
		return false
	}
	all := readOnlyScene(h, newShop, failover, "with Redis refusing every write",
		"A lock attempt that fails is not a lock won, and no reason to fail a reader who has the stale list: serve it, "+
			"and rebuild once Redis takes writes again")
	if !all.Pass {
		return all
	}
	list := readOnlyScene(h, newShop, listOnly, "with Redis refusing every write of the list",
		"A rebuild whose list Redis refuses has failed: keep its lock until it expires, as after a failed query, "+
			"so that the fleet tries again once per lock, not once per reader")
	if !list.Pass {
		return list
	}
	return check.Passed(all.Figure + "; " + list.Figure)
}

// readOnlyScene is one scene of ReadOnly: refuse says which commands
// Redis refuses, while says so for a message, and fix what to do.
func readOnlyScene(h *harness.H, newShop NewShop, refuse func(fleet.Command) bool, while, fix string) check.Verdict {
	sc, fail := filledScene(h, newShop, instances)
	if sc == nil {
		return fail
	}
	defer sc.Close()
	for i := range instances {
		sc.Tap(i).Fail(refuse, case06.ErrReadOnly, -1)
	}
	before := sc.Reads()
	readers := 0
	for at := stale; at < stale+readOnlyFor; at += failingEvery {
		if err := sc.until(at); err != nil {
			return case06.StuckVerdict(err)
		}
		if v := sc.servedAtOnce(readers%instances, at, while); !v.Pass {
			if v.Figure == "" {
				v.Message += ". " + fix
			}
			return v
		}
		readers++
		// servedAtOnce returned with the scene at rest (Drive looks
		// for rest before it asks whether the reader is done): the
		// counts are read on a scene at rest with no second look.
		if q := sc.Reads() - before; q > mostReadOnly {
			return check.Failed(fmt.Sprintf("%s by %s", count(q, "read"), sc.at(at)), fmt.Sprintf("from before %s on, %s "+
				"(%v), stale readers came every %v on %d instances. By %s, after %d readers, the fleet had sent the "+
				"database %d queries for the shelf, more than one a second: each rebuild whose Redis command was "+
				"refused let the next reader rebuild again. %s", sc.at(stale), while, case06.ErrReadOnly, failingEvery,
				instances, sc.at(at), readers, q, fix))
		}
	}
	return check.Passed(fmt.Sprintf("%d stale readers served, %s: %s", readers, strings.TrimPrefix(while, "with "),
		count(sc.Reads()-before, "read")))
}

// rebuildPanicsInfo is the check that a panicking background rebuild does
// not take the instance down.
var rebuildPanicsInfo = check.Info{
	ID:   "rebuild-panics",
	Name: "a background rebuild whose query panics leaves the instance up: its stale readers are served before and after",
	Catches: "a background rebuild with no recover: the driver's panic on its goroutine ends the whole process, " +
		"and every visitor of the instance with it",
}

// RebuildPanics checks that a background rebuild whose query panics (a
// driver's bug) does not end the process. The shelf is filled; from before
// its logical expiry every query panics. A stale reader on shop-1 is
// served and starts the rebuild, whose query panics on the rebuild's own
// goroutine; a second later another stale reader must be served. A
// panic nobody recovers ends the checker's process with it, which the
// grader reports as this check's failure, with the panic's place.
func RebuildPanics(h *harness.H, newShop NewShop) check.Verdict {
	sc, fail := filledScene(h, newShop, 2)
	if sc == nil {
		return fail
	}
	defer sc.Close()
	sc.db.Panic("driver: bad connection state (planned by the checker)")
	before := sc.Reads()
	if err := sc.until(stale); err != nil {
		return case06.StuckVerdict(err)
	}
	if v := sc.servedAtOnce(0, stale, "with every query panicking"); !v.Pass {
		return v
	}
	if err := sc.settled(); err != nil {
		return case06.StuckVerdict(err)
	}
	if sc.Reads() == before {
		return noRebuild(sc, "rebuild whose query could panic")
	}
	if v := sc.servedAtOnce(0, stale+time.Second, "after a rebuild's query panicked"); !v.Pass {
		return v
	}
	return check.Passed("a rebuild's query panicked; the stale list served on")
}
