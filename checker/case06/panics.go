package case06

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"

	"stampede/checker/check"
	"stampede/checker/fleet"
	"stampede/checker/harness"
	"stampede/checker/shelves"
	"stampede/shop/catalog"
)

// panicInfo describes the panic check. It lives here, not in Case's
// literal, so that the list of checks names it in one line.
var panicInfo = check.Info{
	ID:   "panic",
	Name: "a panic in the query reaches its visitors as an error or a panic, and the instance lives on: its next visitor gets the list",
	Catches: "a flight with no recover, case 5's lesson forgotten: singleflight's DoChan re-panics on a goroutine " +
		"nobody can recover, and the whole instance dies with every visitor it was serving",
}

// panicValue is what the first query panics with.
const panicValue = "catalog driver: nil connection in pool"

// Panics checks that a panicking query does not take its instance down.
// The fleet's first query panics and the ones after it work. The
// visitors of the panicking flight must each return, with an error, a
// panic of their own, or the list from a later query; then, once any lock the flight left behind
// has been cleared, the same instance's next visitor must get the list.
func Panics(h *harness.H, newShop NewShop) check.Verdict {
	f, err := newFleet(h, newShop, 0, holdNone())
	if err != nil {
		return fleet.Unreachable(err)
	}
	defer f.Close()
	// The fleet's database, with a first query that panics: the hook runs
	// on the goroutine that calls db.Top, wherever the shop runs it.
	// It is held at a gate until the visitors have settled, so that they
	// all wait for it.
	var queries atomic.Int64
	gate := harness.NewGate()
	f.gates.all = append(f.gates.all, gate) // opened by Close, whatever happens
	f.db = catalog.New(catalog.WithCost(0), catalog.WithHook(func(ctx context.Context, _ string) error {
		if queries.Add(1) > 1 {
			return nil
		}
		if err := gate.Wait(ctx); err != nil {
			return err
		}
		panic(panicValue)
	}))
	for range 2 {
		t := fleet.NewTap(nil)
		f.taps = append(f.taps, t)
		f.shops = append(f.shops, newShop(f.db, f.World.Client(t), f.Clock))
	}

	first := f.Visit(0, 5)
	if err := first.Settle(); err != nil {
		return stuckVerdict(err)
	}
	gate.Open()
	if err := f.Drive(first.Done, patience); err != nil {
		return waitVerdict(err, "the visitors of the panicking query were")
	}
	// A visitor may also have queried again after the panic, and got the
	// list: this check is about the instance living on.
	want := catalog.Books(catalog.Bestsellers)
	errs, panics, lists := 0, 0, 0
	for i, o := range first.Outcomes() {
		switch {
		case o.Panic != "":
			panics++
		case o.Err != nil:
			errs++
		case slices.Equal(o.Value, want):
			lists++
		default:
			return check.Failed("", fmt.Sprintf("the query panicked, and visitor %d got %q and no error", i+1, o.Value))
		}
	}
	figure := fmt.Sprintf("%d with an error, %d by a panic, %d with the list", errs, panics, lists)

	// Whether the panicking holder let go of its lock is another check's
	// business: clear whatever it left in Redis.
	if err := f.World.DeleteAll(h.Context()); err != nil {
		return fleet.Unreachable(err)
	}
	next := f.Visit(0, 1)
	if err := f.Drive(next.Done, patience); err != nil {
		return waitVerdict(err, "after the panic, shop-1's next visitor was")
	}
	if v := shelves.AllGot(next.Outcomes(), catalog.Books(catalog.Bestsellers)); !v.Pass {
		return check.Failed(figure, "after the panic, shop-1's next visitor: "+v.Message)
	}
	return check.Passed(figure + "; the next visitor got the list")
}
