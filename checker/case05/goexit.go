package case05

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"

	"stampede/checker/check"
	"stampede/checker/explore"
	"stampede/checker/harness"
	"stampede/checker/shelves"
	"stampede/shop/catalog"
)

// goexitInfo describes the Goexit check. It lives here, not in Case's
// literal, so that the list of checks names it in one line.
var goexitInfo = check.Info{
	ID: "goexit",
	Name: "a query that ends in runtime.Goexit is neither cached nor left hanging: every visitor returns, " +
		"by its deadline at the latest, and the next one gets the list",
	Catches: "a flight landed by recover alone: recover returns nil when the query calls runtime.Goexit, so the flight " +
		"lands as a success with no books and caches them; a flight that never lands and stays in the table; and waiters " +
		"whose deadline cannot reach them",
}

// Goexits checks that a query that ends its goroutine with runtime.Goexit
// (as t.FailNow does in a test's fake database) is told apart from a
// normal return. Each visitor has a deadline, as a server gives every
// request; the checker makes it pass once the shop has come to rest after
// the Goexit, not a clock. Every visitor must return: with an error, a
// panic or a Goexit of its own, or, still waiting when its deadline
// passes, with its context's error. That last is what
// x/sync/singleflight's DoChan does: it sends nothing after a Goexit, and
// its callers leave by their contexts. None may get an empty list as if
// the query had worked, and none may wait on after its deadline. Nothing
// may be cached: once the database behaves, the next visitor gets the list
// from a new query.
//
// The catalog hook runs on the goroutine that calls db.Top, so the Goexit
// ends whichever goroutine the shop runs its query on.
func Goexits(h *harness.H, newShop shelves.New) check.Verdict {
	var exiting atomic.Bool
	exiting.Store(true)
	gate := harness.NewGate()
	db := catalog.New(catalog.WithCost(0), catalog.WithHook(func(ctx context.Context, _ string) error {
		if err := gate.Wait(ctx); err != nil {
			return err
		}
		if exiting.Load() {
			runtime.Goexit()
		}
		return nil
	}))
	shop := newShop(db)

	// Each visitor's deadline ends when the checker says (see
	// explore.NewContext). A visitor whose call ends by runtime.Goexit
	// never reaches the line after the call: that is how the check tells
	// it from a return.
	ctxs := make([]context.Context, shelves.Visitors)
	ends := make([]func(), shelves.Visitors)
	for i := range ctxs {
		ctxs[i], ends[i], _ = explore.NewContext(i, true)
	}
	deadline := func() {
		for _, end := range ends {
			end()
		}
	}
	defer deadline()
	normal := make([]atomic.Bool, shelves.Visitors)
	crowd := harness.Visit(h, shelves.Visitors, func(_ context.Context, i int) ([]string, error) {
		books, err := shop.Top(ctxs[i], catalog.Bestsellers)
		normal[i].Store(true)
		return books, err
	})
	err := crowd.Settle()
	gate.Open()
	if err == nil {
		err = h.Settled(func() bool { return true })
	}
	if err != nil {
		return shelves.Stuck(err)
	}
	// What the visitors got from the flight itself, before any deadline.
	early := crowd.Outcomes()
	if v := goexitOutcomes(early, early, normal); !v.Pass {
		return v
	}
	deadline()
	if err := crowd.Wait(); err != nil {
		return check.Failed(fmt.Sprintf("%d still waiting past their deadline", shelves.Visitors-returnedOf(crowd.Outcomes())),
			"the query called runtime.Goexit, and the visitors waiting for it stayed after their deadlines had passed: "+err.Error()+
				" (a waiter's way out is its context: wait in a select on the flight's channel and ctx.Done(), and return ctx.Err())")
	}
	v := goexitOutcomes(early, crowd.Outcomes(), normal)
	if !v.Pass {
		return v
	}
	figure := v.Figure

	if err := h.Settled(func() bool { return true }); err != nil {
		return shelves.Stuck(err)
	}
	exiting.Store(false)
	before := db.Queries(catalog.Bestsellers)
	nctx, nend, _ := explore.NewContext(0, true)
	defer nend()
	next := harness.Visit(h, 1, func(context.Context, int) ([]string, error) { return shop.Top(nctx, catalog.Bestsellers) })
	if err := h.Settled(func() bool { return true }); err != nil {
		return shelves.Stuck(err)
	}
	if !next.Done() {
		where := next.Where()
		nend()
		_ = next.Wait()
		return check.Failed(figure, "the query had ended in runtime.Goexit, and the next visitor, with the database working, "+
			"was still waiting once the shop had come to rest: "+where+" (the flight the Goexit ended must leave the table, "+
			"in the deferred function that lands it)")
	}
	if v := shelves.AllGot(next.Outcomes(), catalog.Books(catalog.Bestsellers)); !v.Pass {
		return check.Failed(figure, "the query had ended in runtime.Goexit, and once the database worked the next visitor: "+v.Message)
	}
	if db.Queries(catalog.Bestsellers) == before {
		return check.Failed(figure, "the next visitor got a list without a query: what the Goexit left was cached")
	}
	return check.Passed(figure + "; the next visitor got the list")
}

// goexitOutcomes judges what the visitors of a flight that ended in
// runtime.Goexit returned, outs, of whom those in early had returned
// before their deadline passed. An error, a panic or a Goexit of their own
// are all fine, and so, from a visitor still waiting at its deadline, is
// its context's error (which the figure counts apart); a list with no
// error is not. (Which error a visitor who gives up returns is the give-up
// check's business.)
func goexitOutcomes(early, outs []harness.Outcome[[]string], normal []atomic.Bool) check.Verdict {
	var errs, panics, exits, timedOut int
	first := ""
	for i, o := range outs {
		switch {
		case !o.Returned:
		case o.Panic != "":
			panics++
		case !normal[i].Load():
			exits++
		case o.Err == nil:
			first = cmp(first, fmt.Sprintf("visitor %d got %q and no error, as if the query had worked: recover returns nil "+
				"when the query calls runtime.Goexit, so a flag set after the call must say whether it returned", i+1, o.Value))
		case !early[i].Returned && errors.Is(o.Err, context.DeadlineExceeded):
			timedOut++
		default:
			errs++
		}
	}
	figure := fmt.Sprintf("%d with an error, %d by a panic, %d by Goexit", errs, panics, exits)
	if timedOut > 0 {
		figure += fmt.Sprintf(", %d by its deadline", timedOut)
	}
	if first != "" {
		return check.Failed(figure, first)
	}
	return check.Passed(figure)
}

// returnedOf counts the visitors who have returned.
func returnedOf(outs []harness.Outcome[[]string]) int {
	n := 0
	for _, o := range outs {
		if o.Returned {
			n++
		}
	}
	return n
}
