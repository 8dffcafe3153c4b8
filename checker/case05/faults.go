package case05

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync/atomic"

	"stampede/checker/check"
	"stampede/checker/harness"
	"stampede/checker/shelves"
	"stampede/shop/catalog"
)

// downError is the database's error while it is down in the checks. Each
// outage makes a new one, with a text of its own, so that code can find it
// only by following the wrapped errors to it: not by comparing its text,
// and not through an Is method that says yes to everything.
type downError struct{ text string }

func (e *downError) Error() string { return e.text }

// newDown returns a new database error, different from every other.
func newDown() *downError {
	return &downError{text: fmt.Sprintf("connection refused (pool %04x)", rand.IntN(1<<16))}
}

// panicValue is what the query panics with in the panic scene.
const panicValue = "catalog driver: nil connection in pool"

// outage is a database that holds queries at a gate and, while it is down,
// fails every query that gets past the gate: with its error, or by
// panicking.
type outage struct {
	db     *catalog.DB
	gate   atomic.Pointer[harness.Gate]
	err    atomic.Pointer[downError] // nil while the database is up
	panics bool
}

func newOutage(panics bool) *outage {
	o := &outage{panics: panics}
	o.gate.Store(harness.NewGate())
	o.err.Store(newDown())
	o.db = catalog.New(catalog.WithCost(0), catalog.WithHook(o.hook))
	return o
}

func (o *outage) hook(ctx context.Context, _ string) error {
	if err := o.gate.Load().Wait(ctx); err != nil {
		return err
	}
	down := o.err.Load()
	switch {
	case down == nil:
		return nil
	case o.panics:
		panic(panicValue)
	}
	return down
}

// up brings the database back.
func (o *outage) up() { o.err.Store(nil) }

// burst sends shelves.Visitors visitors for the bestsellers, lets them
// settle behind the query held at a new gate, holds it there for the
// story's query time (shelves.Linger), opens it, and waits for them all.
// early are the outcomes of whoever returned while the query was held.
func (o *outage) burst(h *harness.H, shop shelves.Shop) (crowd *harness.Crowd[[]string], early []harness.Outcome[[]string], err error) {
	gate := harness.NewGate()
	o.gate.Store(gate)
	crowd = harness.Visit(h, shelves.Visitors, top(shop))
	err = crowd.Settle()
	if err == nil {
		err = shelves.Linger(h)
	}
	early = crowd.Outcomes()
	gate.Open()
	if err != nil {
		return crowd, early, err
	}
	return crowd, early, crowd.Wait()
}

// top returns a visit that asks the shop for the bestsellers.
func top(s shelves.Shop) func(context.Context, int) ([]string, error) {
	return func(ctx context.Context, _ int) ([]string, error) { return s.Top(ctx, catalog.Bestsellers) }
}

// gaveUpEarly says which visitor returned while the query was still held,
// and with what: a waiter that gives up on a timer of its own.
func gaveUpEarly(early []harness.Outcome[[]string]) (check.Verdict, bool) {
	for i, o := range early {
		if o.Returned && o.Panic == "" {
			return check.Failed("", fmt.Sprintf(
				"visitor %d stopped waiting while the query was still running and returned %q, error %v: "+
					"the story's query takes %.1f s, and a waiter must wait for it however long it takes",
				i+1, o.Value, o.Err, catalog.QueryCost.Seconds())), true
		}
	}
	return check.Verdict{}, false
}

// Returns checks that when the query fails, every visitor returns. It catches
// a lock that the error path never releases: the first visitor gets the
// error and the rest wait for the lock forever.
func Returns(h *harness.H, newShop shelves.New) check.Verdict {
	o := newOutage(false)
	shop := newShop(o.db)
	crowd, _, err := o.burst(h, shop)
	if err != nil {
		return shelves.Stuck(err)
	}
	if p := crowd.Panicked(); p != "" {
		return check.Failed("", "a visitor's call panicked: "+p)
	}
	return check.Passed(fmt.Sprintf("%d of %d returned", len(crowd.Outcomes()), shelves.Visitors))
}

// back brings the database back once the shop has settled, and checks
// that the next visitors get the list from one new query, and that the one
// after them gets it from the cache.
func back(h *harness.H, o *outage, shop shelves.Shop, when string) check.Verdict {
	// Let whatever the shop does after its visitors have their answer
	// finish first: the next visitors come after the failure, not during.
	if err := h.Settled(func() bool { return true }); err != nil {
		return shelves.Stuck(err)
	}
	o.up()
	before := o.db.Queries(catalog.Bestsellers)
	next := harness.Visit(h, shelves.LaterVisitors, top(shop))
	if err := next.Wait(); err != nil {
		return check.Failed("", when+", with the database back, the next visitors never finished: "+err.Error())
	}
	if v := shelves.AllGot(next.Outcomes(), catalog.Books(catalog.Bestsellers)); !v.Pass {
		return check.Failed("got "+v.Figure, fmt.Sprintf("%s, the database is back, and the next visitors did not get the list: %s "+
			"(a failure must not be kept: not in the cache, not in a flight left in the table)", when, v.Message))
	}
	if q := o.db.Queries(catalog.Bestsellers) - before; q != 1 {
		return check.Failed(fmt.Sprintf("ran %d", q), fmt.Sprintf(
			"%s, the database is back and %d visitors came at once: the database answered %d queries for them, where one would do",
			when, shelves.LaterVisitors, q))
	}
	return shelves.Later(h, shop, o.db, catalog.Bestsellers)
}

// after returns v, or later when later failed.
func after(v, later check.Verdict) check.Verdict {
	if !later.Pass {
		return later
	}
	return v
}

// errorOf judges a visitor's error against the database's: the same error,
// reached by unwrapping. It says in the student's terms what is wrong.
func errorOf(got error, want *downError) string {
	switch {
	case got == nil:
		return "no error"
	case wraps(got, want):
		return ""
	case strings.Contains(got.Error(), want.Error()):
		return fmt.Sprintf("%q, which has the database's text but not the database's error: "+
			"it was wrapped with %%v (or rebuilt from its text), so errors.Is cannot find it; wrap with %%w, or return it as it is", got)
	case errors.Is(got, want):
		return fmt.Sprintf("%q, an error whose Is method claims to be the database's error without wrapping it", got)
	}
	return fmt.Sprintf("%q, not the database's error", got)
}

// wraps reports whether want is err or is reached from it through Unwrap,
// compared by identity.
func wraps(err error, want error) bool {
	for err != nil {
		if err == want {
			return true
		}
		switch u := err.(type) {
		case interface{ Unwrap() error }:
			err = u.Unwrap()
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				if wraps(e, want) {
					return true
				}
			}
			return false
		default:
			return false
		}
	}
	return false
}

// failed checks a failed burst: one query, and every visitor has its
// error. It says which visitor got what.
func failed(crowd *harness.Crowd[[]string], early []harness.Outcome[[]string], q int, want *downError, when string) check.Verdict {
	got, first := 0, ""
	for i, o := range crowd.Outcomes() {
		switch {
		case o.Panic != "":
			first = cmp(first, fmt.Sprintf("visitor %d's call panicked: %s", i+1, o.Panic))
		default:
			if why := errorOf(o.Err, want); why != "" {
				first = cmp(first, fmt.Sprintf("visitor %d got %q and %s", i+1, o.Value, why))
				continue
			}
			got++
		}
	}
	figure := fmt.Sprintf("ran %d, %d of %d got its error", q, got, shelves.Visitors)
	if v, ok := gaveUpEarly(early); ok {
		v.Figure = figure
		return v
	}
	switch {
	case q > 1:
		return check.Failed(figure, fmt.Sprintf(
			"%sthe query failed, and the database was asked %d times for one burst of %d visitors: "+
				"whoever waited for the failed query must get its error, not query again (a retry, or a waiter's own query, is one more failing query)",
			when, q, shelves.Visitors))
	case first != "":
		return check.Failed(figure, when+first)
	}
	return check.Passed(figure)
}

// SharedError checks that the visitors of a failed query all get its
// error, the very error the database returned, and that the database is
// not asked again by each waiter in turn. It catches a per-shelf lock
// whose waiters, finding the cache still empty when their turn comes,
// query again: while the database is down, that is one failing query per
// visitor, in a row.
func SharedError(h *harness.H, newShop shelves.New) check.Verdict {
	o := newOutage(false)
	want := o.err.Load()
	crowd, early, err := o.burst(h, newShop(o.db))
	if err != nil {
		return shelves.Stuck(err)
	}
	return failed(crowd, early, o.db.Queries(catalog.Bestsellers), want, "")
}

// NotCached checks that a failure is not kept: the database fails two
// bursts in a row, each with an error of its own, and the second burst
// asks the database again and gets the second error; once the database is
// back, the next visitors get the list from one query, and the visitors
// after them get it from the cache. It catches a cache or a flight table
// that keeps the error as if it were the answer, and a breaker that stays
// open from the second failure on.
func NotCached(h *harness.H, newShop shelves.New) check.Verdict {
	o := newOutage(false)
	shop := newShop(o.db)
	var old *downError
	for i := range 2 {
		want := newDown()
		o.err.Store(want)
		before := o.db.Queries(catalog.Bestsellers)
		if i > 0 {
			if err := h.Settled(func() bool { return true }); err != nil {
				return shelves.Stuck(err)
			}
		}
		crowd, _, err := o.burst(h, shop)
		if err != nil {
			return shelves.Stuck(err)
		}
		if i == 0 {
			old = want
			continue
		}
		if o.db.Queries(catalog.Bestsellers) == before {
			return check.Failed("ran 0", "the query failed once, and the next burst got an error without a query: "+
				"the failure was kept (a cached error, or a breaker that stays open)")
		}
		for j, out := range crowd.Outcomes() {
			if out.Err != nil && wraps(out.Err, old) {
				return check.Failed("got the first error again", fmt.Sprintf(
					"the query failed twice, and visitor %d of the second burst got the first failure's error (%v): the failure was kept", j+1, out.Err))
			}
		}
	}
	return after(check.Passed("the next visitors got the list"), back(h, o, shop, "after two failures in a row"))
}

// Panics checks that a panic in the query reaches every visitor of the
// flight as an error or as a panic of their own, never as a wait without
// end and never as a crash of the whole program; and that with the
// database back, the shelf works again. It catches cleanup that is not
// deferred (a lock still held, a flight that never lands or stays in the
// table) and a query run on a goroutine that nobody recovers.
func Panics(h *harness.H, newShop shelves.New) check.Verdict {
	o := newOutage(true)
	shop := newShop(o.db)
	crowd, _, err := o.burst(h, shop)
	if err != nil {
		return shelves.Stuck(err)
	}
	got, first := 0, ""
	for i, o := range crowd.Outcomes() {
		if o.Panic != "" || o.Err != nil {
			got++
			continue
		}
		first = cmp(first, fmt.Sprintf("visitor %d got %q and no error, as if the query had worked", i+1, o.Value))
	}
	figure := fmt.Sprintf("%d of %d got an error or a panic", got, shelves.Visitors)
	if first != "" {
		return check.Failed(figure, first)
	}
	return after(check.Passed(figure), back(h, o, shop, "after the query panicked"))
}

func cmp(first, s string) string {
	if first != "" {
		return first
	}
	return s
}
