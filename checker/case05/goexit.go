package case05

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"

	"stampede/checker/check"
	"stampede/checker/harness"
	"stampede/checker/shelves"
	"stampede/shop/catalog"
)

// goexitInfo describes the Goexit check. It lives here, not in Case's
// literal, so that the list of checks names it in one line.
var goexitInfo = check.Info{
	ID:   "goexit",
	Name: "a query that ends in runtime.Goexit is neither cached nor left hanging: every visitor returns, and the next one gets the list",
	Catches: "a flight landed by recover alone: recover returns nil when the query calls runtime.Goexit, so the flight " +
		"lands as a success with no books and caches them, or (singleflight's DoChan) never lands at all",
}

// Goexits checks that a query that ends its goroutine with runtime.Goexit
// (as t.FailNow does in a test's fake database) is told apart from a
// normal return: every visitor of the flight returns, with an error, a
// panic, or a Goexit of its own, none with an empty list as if the query
// had worked; and nothing is cached, so that once the database behaves,
// the next visitor gets the list from a new query.
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

	// A visitor whose call ends by runtime.Goexit never reaches the line
	// after the call: that is how the check tells it from a return.
	normal := make([]atomic.Bool, shelves.Visitors)
	crowd := harness.Visit(h, shelves.Visitors, func(ctx context.Context, i int) ([]string, error) {
		books, err := shop.Top(ctx, catalog.Bestsellers)
		normal[i].Store(true)
		return books, err
	})
	err := crowd.Settle()
	gate.Open()
	if err == nil {
		err = crowd.Wait()
	}
	if err != nil {
		return check.Failed("", "the query called runtime.Goexit, and the visitors never finished: "+err.Error()+
			" (a Goexit runs deferred calls, but recover returns nil: tell a return, a panic and a Goexit apart with a flag set after the call)")
	}
	var errs, panics, exits int
	first := ""
	for i, o := range crowd.Outcomes() {
		switch {
		case o.Panic != "":
			panics++
		case !normal[i].Load():
			exits++
		case o.Err != nil:
			errs++
		default:
			first = cmp(first, fmt.Sprintf("visitor %d got %q and no error, as if the query had worked: recover returns nil "+
				"when the query calls runtime.Goexit, so a flag set after the call must say whether it returned", i+1, o.Value))
		}
	}
	figure := fmt.Sprintf("%d with an error, %d by a panic, %d by Goexit", errs, panics, exits)
	if first != "" {
		return check.Failed(figure, first)
	}

	if err := h.Settled(func() bool { return true }); err != nil {
		return shelves.Stuck(err)
	}
	exiting.Store(false)
	before := db.Queries(catalog.Bestsellers)
	next := harness.Visit(h, 1, top(shop))
	if err := next.Wait(); err != nil {
		return check.Failed(figure, "the query had ended in runtime.Goexit, and the next visitor never finished: "+err.Error())
	}
	if v := shelves.AllGot(next.Outcomes(), catalog.Books(catalog.Bestsellers)); !v.Pass {
		return check.Failed(figure, "the query had ended in runtime.Goexit, and once the database worked the next visitor: "+v.Message)
	}
	if db.Queries(catalog.Bestsellers) == before {
		return check.Failed(figure, "the next visitor got a list without a query: what the Goexit left was cached")
	}
	return check.Passed(figure + "; the next visitor got the list")
}
