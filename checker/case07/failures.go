package case07

import (
	"fmt"
	"time"

	"stampede/checker/check"
	"stampede/checker/harness"
)

// failingQueries is the second scene of Panics: the steady traffic of the
// other checks for four windows on a database whose first query, the
// first fill, and third, the first recompute after the fill that follows,
// each take their time and then return an error. A failed recompute stores nothing, and the next one may
// try again: the shop must start another recompute after each failure,
// every read must get the list once a recompute has succeeded since the
// last failure began, and the list must be fresh when the traffic ends.
// While a failure is being recovered from, a read may get the list (a
// fresh one it holds, or a retry's) or the failure's error: the reference
// hands the error to the readers who waited for the failed query, and a
// shop whose waiters try again hands them the list.
func failingQueries(h *harness.H, newShop New) check.Verdict {
	tr := traffic
	tr.span = 4 * tr.shop.ttl
	w := newWorld(h)
	fails := func(n int) bool { return n == 1 || n == 3 }
	if err := w.playOn(w.openScene(newShop, tr.shop, newSource(tr.shop.seed, false).draw, dbScene{fails: fails}), tr); err != nil {
		return failed(err)
	}
	qs, rs := w.snapshot()
	if len(qs) == 0 {
		return check.Failed("no query", "no read ever reached the database: the list must come from it")
	}
	var good, bad []query
	for i, q := range qs {
		if fails(i + 1) {
			bad = append(bad, q)
		} else {
			good = append(good, q)
		}
	}
	lastErr := func() error {
		for i := len(rs) - 1; i >= 0; i-- {
			if rs[i].err != nil {
				return rs[i].err
			}
		}
		return nil
	}
	if len(qs) == 1 {
		return check.Failed("no recompute after the failed fill", fmt.Sprintf("the first fill's query failed with an error "+
			"after %s, and no query ever started again: every read after it got %v. A failed recompute must leave "+
			"nothing behind: end its flight, remove it from the table and store nothing, so that the next reader starts "+
			"another", secs(tr.shop.cost), lastErr()))
	}
	if len(qs) == 3 {
		third := qs[2]
		what := "an early recompute"
		if !(history{ttl: tr.shop.ttl, qs: qs[1:2]}).freshAt(third.start) {
			what = "a recompute on a miss"
		}
		return check.Failed("no recompute after the failed one", fmt.Sprintf("the first fill failed and the next query "+
			"filled the list; then %s, %.1f s after that, failed with an error, and no query ever started again: the "+
			"refreshes stopped, and the list expired under its readers (the last read got %v). A recompute that returns "+
			"an error must end its flight as a panicking one does: remove it from the table, store nothing, and let the "+
			"next lucky reader, or the next miss, start another", what, third.start.Sub(qs[1].end).Seconds(), lastErr()))
	}
	figure := fmt.Sprintf("after a failed fill and a failed recompute, %d recomputes succeeded", len(good))
	for i, r := range rs {
		if recovering := failing(bad, good, r.arrived); recovering {
			continue
		}
		switch {
		case r.err != nil:
			return check.Failed(figure, fmt.Sprintf("read %d, %.1f s after the first fill began, got an error though a "+
				"recompute had succeeded since the last failed query: %v. The failure must not outlive its flight: "+
				"neither cache the error nor keep the failed flight where later readers find it", i+1,
				r.arrived.Sub(qs[0].start).Seconds(), r.err))
		case r.wrong != nil:
			return check.Failed(figure, fmt.Sprintf("read %d, after a recompute had succeeded since the last failed "+
				"query, got %q, not the database's list", i+1, r.wrong))
		}
	}
	if last := rs[len(rs)-1]; !(history{ttl: tr.shop.ttl, qs: good}).freshAt(last.arrived) {
		return check.Failed(figure, "when the traffic ended the list had expired and not been refreshed")
	}
	return check.Passed(figure)
}

// failing reports whether a read arriving at t may get a failure's error:
// a failed query had begun by then, and no query that began since has
// succeeded by then.
func failing(bad, good []query, t time.Time) bool {
	var since time.Time
	found := false
	for _, q := range bad {
		if !q.start.After(t) && (!found || q.start.After(since)) {
			since, found = q.start, true
		}
	}
	if !found {
		return false
	}
	for _, q := range good {
		if !q.start.Before(since) && !q.end.After(t) {
			return false
		}
	}
	return true
}
