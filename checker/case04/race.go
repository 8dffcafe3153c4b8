package case04

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"

	"stampede/checker/check"
	"stampede/checker/harness"
	"stampede/checker/shelves"
	"stampede/shop/catalog"
)

// FillRounds is how many fresh shops the second part of Readers fills.
const FillRounds = 8

// raceHits is how many hits each hitter makes while the fills run.
const raceHits = 500

// Readers runs the workloads that show the race detector every access to
// the cache: hits on a filled shelf while other shelves are filled, then
// fills of two shelves at once whose waiters look at the cache a second
// time, then the cold and warm visitors of case 1. Its verdict is the race
// detector's; it fails here only if the visitors hang, panic, or get the
// wrong list.
//
// The race detector reports two accesses that nothing orders, whenever
// they happened. So the workloads make sure such pairs exist if the shop
// reads without a lock: the fills start only once every hitter has made a
// few hits, and the hitters go on hitting, so that the hits after that
// point are ordered with no write of the fills.
func Readers(h *harness.H, newShop shelves.New) check.Verdict {
	if v := hitsDuringFills(h, newShop); !v.Pass {
		return v
	}
	for range FillRounds {
		if v := twoFills(h, newShop); !v.Pass {
			return v
		}
	}
	return shelves.Busy(h, newShop)
}

// hitsDuringFills lets Hitters visitors hit the filled bestseller shelf
// raceHits times each. When all of them are a few hits in, the last
// one to get there sends visitors for the two other shelves, whose fills
// write the cache while the hits go on.
func hitsDuringFills(h *harness.H, newShop shelves.New) check.Verdict {
	db := catalog.New(catalog.WithCost(0))
	shop := newShop(db)
	if v := fill(h, shop, catalog.Bestsellers); !v.Pass {
		return check.Failed("", "filling the bestseller shelf first: "+v.Message)
	}
	const fillAt = 8 // hits each hitter makes before the fills may start
	var (
		reached atomic.Int64
		wrong   atomic.Int64
		fillers = make(chan *harness.Crowd[[]string], 1)
	)
	want := catalog.Books(catalog.Bestsellers)
	hitters := harness.Visit(h, Hitters, func(ctx context.Context, _ int) ([]string, error) {
		for r := range raceHits {
			books, err := shop.Top(ctx, catalog.Bestsellers)
			if err != nil || !slices.Equal(books, want) {
				wrong.Add(1)
			}
			if r == fillAt && reached.Add(1) == Hitters {
				fillers <- harness.Visit(h, 10, func(ctx context.Context, i int) ([]string, error) {
					return shop.Top(ctx, allShelves[1+i%2])
				})
			}
		}
		return want, nil
	})
	if err := hitters.Wait(); err != nil {
		return shelves.Stuck(err)
	}
	if p := hitters.Panicked(); p != "" {
		return check.Failed("", "a hit panicked: "+p)
	}
	if n := wrong.Load(); n > 0 {
		return check.Failed("", fmt.Sprintf("%d hits did not get the bestseller list", n))
	}
	var crowd *harness.Crowd[[]string]
	select {
	case crowd = <-fillers:
	default:
		return check.Failed("", "the hitters never all got going")
	}
	if err := crowd.Wait(); err != nil {
		return shelves.Stuck(err)
	}
	return shelvesServed(crowd.Outcomes())
}

// twoFills fills two shelves at once on a fresh shop, with visitors
// waiting on each. Their queries are held at a gate until every visitor
// has settled, so that the waiters look at the cache a second time after
// the fills; whichever fill writes last, its write and the other shelf's
// second looks are ordered by nothing but the cache's own lock.
func twoFills(h *harness.H, newShop shelves.New) check.Verdict {
	gate := harness.NewGate()
	db := catalog.New(catalog.WithCost(0), catalog.WithHook(gate.Hold(catalog.NewReleases, catalog.StaffPicks)))
	shop := newShop(db)
	crowd := harness.Visit(h, 8, func(ctx context.Context, i int) ([]string, error) {
		return shop.Top(ctx, allShelves[1+i%2])
	})
	err := crowd.Settle()
	gate.Open()
	if err == nil {
		err = crowd.Wait()
	}
	if err != nil {
		return shelves.Stuck(err)
	}
	return shelvesServed(crowd.Outcomes())
}

// shelvesServed checks that visitor i got the list of allShelves[1+i%2].
func shelvesServed(outs []harness.Outcome[[]string]) check.Verdict {
	for i, o := range outs {
		shelf := allShelves[1+i%2]
		if v := shelves.AllGot([]harness.Outcome[[]string]{o}, catalog.Books(shelf)); !v.Pass {
			return check.Failed("", fmt.Sprintf("a visitor for %s: %s", shelf, v.Message))
		}
	}
	return check.Passed("")
}
