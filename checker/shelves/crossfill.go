package shelves

import (
	"context"

	"stampede/checker/check"
	"stampede/checker/harness"
	"stampede/shop/catalog"
)

// CrossFill is a workload for the race detector, built for a look at the
// cache that holds the shelf's lock but not the cache's own: a waiter's
// second look, made after its shelf was filled, and then another shelf's
// fill, with nothing at all between the two to order them.
//
// Busy, with everyone running at once, may or may not produce that order:
// the race detector reports two accesses only when nothing orders them,
// and a look that happens to run before the fetcher's own fill is ordered
// by the shelf's lock. Here the order is set by gates. The new-releases
// query is held while the bestseller burst is served; the checker waits
// for the bestseller waiters to finish by watching the goroutines, which
// orders nothing, and only then lets the new-releases fill happen.
//
// Its verdict is the race detector's; it fails here only if the visitors
// hang or panic. What they get is for the other checks to judge.
func CrossFill(h *harness.H, newShop New) check.Verdict {
	best, news := harness.NewGate(), harness.NewGate()
	db := catalog.New(catalog.WithCost(0), catalog.WithHook(func(ctx context.Context, shelf string) error {
		if shelf == catalog.NewReleases {
			return news.Wait(ctx)
		}
		return best.Wait(ctx)
	}))
	shop := newShop(db)
	defer best.Open()
	defer news.Open()

	other := harness.Visit(h, 1, top(shop, catalog.NewReleases))
	if err := other.Settle(); err != nil {
		return Stuck(err)
	}
	crowd := harness.Visit(h, Visitors, top(shop, catalog.Bestsellers))
	if err := crowd.Settle(); err != nil {
		return Stuck(err)
	}
	best.Open()
	// Settle, not Wait or Done: those learn that the visitors have returned
	// from a channel they close or a counter they count down, and that
	// would order their looks before the fill below.
	if err := crowd.Settle(); err != nil {
		return Stuck(err)
	}
	news.Open()
	if err := other.Wait(); err != nil {
		return Stuck(err)
	}
	if err := crowd.Wait(); err != nil {
		return Stuck(err)
	}
	for _, c := range []*harness.Crowd[[]string]{crowd, other} {
		if p := c.Panicked(); p != "" {
			return check.Failed("", "a visitor's call panicked: "+p)
		}
	}
	return check.Passed("")
}

// Races runs the race detector's workloads one after the other: CrossFill,
// then Busy. Like theirs, its verdict is the race detector's.
func Races(h *harness.H, newShop New) check.Verdict {
	if v := CrossFill(h, newShop); !v.Pass {
		return v
	}
	return Busy(h, newShop)
}
