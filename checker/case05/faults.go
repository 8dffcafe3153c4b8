package case05

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"stampede/checker/check"
	"stampede/checker/harness"
	"stampede/checker/shelves"
	"stampede/shop/catalog"
)

// ErrDown is the error of the database while it is down in the checks.
var ErrDown = errors.New("connection refused")

// panicValue is what the query panics with in the panic scene.
const panicValue = "catalog driver: nil connection in pool"

// outage is a database that holds queries at a gate and, while it is down,
// fails every query that gets past the gate: with ErrDown, or by
// panicking.
type outage struct {
	db     *catalog.DB
	gate   *harness.Gate
	down   atomic.Bool
	panics bool
}

func newOutage(panics bool) *outage {
	o := &outage{gate: harness.NewGate(), panics: panics}
	o.down.Store(true)
	o.db = catalog.New(catalog.WithCost(0), catalog.WithHook(o.hook))
	return o
}

func (o *outage) hook(ctx context.Context, _ string) error {
	if err := o.gate.Wait(ctx); err != nil {
		return err
	}
	if !o.down.Load() {
		return nil
	}
	if o.panics {
		panic(panicValue)
	}
	return ErrDown
}

// burst sends shelves.Visitors visitors for the bestsellers while the
// database is down, lets them settle behind the query held at the gate,
// opens it, and waits for them all.
func (o *outage) burst(h *harness.H, shop shelves.Shop) (*harness.Crowd[[]string], error) {
	crowd := harness.Visit(h, shelves.Visitors, top(shop))
	err := crowd.Settle()
	o.gate.Open()
	if err != nil {
		return crowd, err
	}
	return crowd, crowd.Wait()
}

// top returns a visit that asks the shop for the bestsellers.
func top(s shelves.Shop) func(context.Context, int) ([]string, error) {
	return func(ctx context.Context, _ int) ([]string, error) { return s.Top(ctx, catalog.Bestsellers) }
}

// Returns checks that when the query fails, every visitor returns. It
// catches a lock that the error path never releases: the first visitor
// gets the error and the rest wait for the lock forever.
func Returns(h *harness.H, newShop shelves.New) check.Verdict {
	o := newOutage(false)
	crowd, err := o.burst(h, newShop(o.db))
	if err != nil {
		return shelves.Stuck(err)
	}
	if p := crowd.Panicked(); p != "" {
		return check.Failed("", "a visitor's call panicked: "+p)
	}
	return check.Passed(fmt.Sprintf("%d of %d returned", len(crowd.Outcomes()), shelves.Visitors))
}

// SharedError checks that the visitors of a failed query all get its
// error, and that the database is not asked again by each waiter in turn.
// It catches a per-shelf lock whose waiters, finding the cache still empty
// when their turn comes, query again: while the database is down, that is
// one failing query per visitor, in a row.
func SharedError(h *harness.H, newShop shelves.New) check.Verdict {
	o := newOutage(false)
	crowd, err := o.burst(h, newShop(o.db))
	if err != nil {
		return shelves.Stuck(err)
	}
	q := o.db.Queries(catalog.Bestsellers)
	got, first := 0, ""
	for i, o := range crowd.Outcomes() {
		switch {
		case o.Panic != "":
			first = cmp(first, fmt.Sprintf("visitor %d's call panicked: %s", i+1, o.Panic))
		case !errors.Is(o.Err, ErrDown):
			first = cmp(first, fmt.Sprintf("visitor %d got %q and error %v, not the database's error", i+1, o.Value, o.Err))
		default:
			got++
		}
	}
	figure := fmt.Sprintf("ran %d, %d of %d got its error", q, got, shelves.Visitors)
	switch {
	case q > 1:
		return check.Failed(figure, fmt.Sprintf(
			"the query failed and the waiters asked the database again, one after another: %d queries for one burst", q))
	case first != "":
		return check.Failed(figure, first)
	}
	return check.Passed(figure)
}

// NotCached checks that a failure is not kept: once the database is back,
// the next visitor gets the list. It catches a cache, or a flight table,
// that stores the error as if it were the answer.
func NotCached(h *harness.H, newShop shelves.New) check.Verdict {
	o := newOutage(false)
	shop := newShop(o.db)
	if _, err := o.burst(h, shop); err != nil {
		return shelves.Stuck(err)
	}
	// Let whatever the shop does after its visitors have their answer
	// finish first: the next visitor comes after the failure, not during.
	if err := h.Settled(func() bool { return true }); err != nil {
		return shelves.Stuck(err)
	}
	o.down.Store(false)
	before := o.db.Queries(catalog.Bestsellers)
	next := harness.Visit(h, 1, top(shop))
	if err := next.Wait(); err != nil {
		return shelves.Stuck(err)
	}
	out := next.Outcomes()[0]
	if out.Err != nil && errors.Is(out.Err, ErrDown) {
		return check.Failed("got the error again", fmt.Sprintf(
			"the database is back, and the next visitor still got the failed query's error (%v): the failure was cached", out.Err))
	}
	if v := shelves.AllGot(next.Outcomes(), catalog.Books(catalog.Bestsellers)); !v.Pass {
		return check.Failed("", "the database is back, and the next visitor: "+v.Message)
	}
	if o.db.Queries(catalog.Bestsellers) == before {
		return check.Failed("", "the next visitor got a list without a query")
	}
	return check.Passed("the next visitor got the list")
}

// Panics checks that a panic in the query reaches every visitor of the
// flight as an error or as a panic of their own, never as a wait without
// end and never as a crash of the whole program. It catches cleanup that
// is not deferred (a lock still held, a flight that never lands) and a
// query run on a goroutine that nobody recovers.
func Panics(h *harness.H, newShop shelves.New) check.Verdict {
	o := newOutage(true)
	crowd, err := o.burst(h, newShop(o.db))
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
	return check.Passed(figure)
}

func cmp(first, s string) string {
	if first != "" {
		return first
	}
	return s
}
