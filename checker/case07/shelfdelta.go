package case07

import (
	"context"
	"fmt"
	"math"
	"time"

	"stampede/checker/check"
	"stampede/checker/harness"
	"stampede/shop/catalog"
)

// The probe of two shelves, Delta's third: each of shelfProbes shops has a
// slow shelf, the bestsellers, whose query takes slowCost, and a fast one,
// the new releases, whose query takes fastCost. The slow shelf is filled
// first; the fast one is filled once the slow one has landed, so that the
// last recompute each shop measured is the fast shelf's. Then each shop's
// slow shelf is read once, shelfLeft before its list expires.
//
// With delta kept per shelf, one read there recomputes with chance
// exp(-shelfLeft/slowCost) = exp(-1.5), or exp(-0.5) for a list that
// lives from its query's start (its time left is one slowCost shorter):
// at least shelfFloor of the probes, 3, but for a chance below shelfTail
// (the larger chance only makes the count larger). With one delta for the
// whole shop, the last one measured, the chance is exp(-60), or exp(-20)
// dated from the start: the chance that even 3 of 100 reads recompute is
// below C(100, 3) exp(-60), about 1e-21 (the reference, which skips the
// draw where none could fire, recomputes in none). The count's upper side
// is left to compare's probes. So the probe fails a right rule with a
// chance below shelfTail, and Delta, with compare's 4*tail, below 8.1e-7
// (see TestShelfFloor). (A 2 s shelf read 4 s before expiry needed 200
// shops for the same bounds, and took the check twice the time.)
const (
	shelfProbes = 100
	slowCost    = 4 * time.Second
	fastCost    = 100 * time.Millisecond
	shelfLeft   = 6 * time.Second
	shelfTail   = 1e-8
)

// shelfConfig is the probe's shop; its cost is the slow shelf's.
var shelfConfig = shopConfig{cost: slowCost, ttl: 30 * time.Second, beta: 1, seed: 19}

// shelfFloor is the least count of recomputes a right rule gives in the
// probe of two shelves, but for a chance below shelfTail.
func shelfFloor() int { return atLeast(shelfProbes, chanceAt(shelfConfig, shelfLeft), shelfTail) }

// atLeast returns the largest k such that a binomial count of n trials,
// each succeeding with chance p, is below k with a chance of at most tail.
func atLeast(n int, p, tail float64) int {
	lg := func(x int) float64 { v, _ := math.Lgamma(float64(x) + 1); return v }
	pmf := func(k int) float64 {
		return math.Exp(lg(n) - lg(k) - lg(n-k) + float64(k)*math.Log(p) + float64(n-k)*math.Log1p(-p))
	}
	below, k := 0.0, 0
	for k < n && below+pmf(k) <= tail {
		below += pmf(k)
		k++
	}
	return k
}

// shelfDelta plays the probe of two shelves after compare has passed with
// v, and returns Delta's verdict.
func shelfDelta(h *harness.H, newShop New, v check.Verdict) check.Verdict {
	fired, fastRan, err := probeShelves(h, newShop)
	if err != nil {
		return failed(err)
	}
	floor := shelfFloor()
	figure := fmt.Sprintf("%s; a %s shelf read %s before expiry, after a %s shelf's recompute: %d of %d recompute, "+
		"at least %d", v.Figure, secs(slowCost), secs(shelfLeft), secs(fastCost), fired, shelfProbes, floor)
	if fastRan < shelfProbes {
		figure += fmt.Sprintf(" (the %s shelf was queried in %d of the %d shops)", secs(fastCost), fastRan, shelfProbes)
	}
	if fired < floor {
		return check.Failed(figure, fmt.Sprintf("each of %d shops has two shelves: the bestsellers, whose query takes %s, "+
			"and the new releases, %s. The bestsellers were filled first, then the new releases; read %s before the "+
			"bestsellers expire, %d shops recomputed them, where their own %s delta makes at least %d do so "+
			"(exp(-%s/%s) of %d is %.0f). The rule used a smaller delta: the %s of the shelf recomputed last? "+
			"Store delta with each shelf's list, not once for the whole shop",
			shelfProbes, secs(slowCost), secs(fastCost), secs(shelfLeft), fired, secs(slowCost), floor,
			secs(shelfLeft), secs(slowCost), shelfProbes, float64(shelfProbes)*chanceAt(shelfConfig, shelfLeft), secs(fastCost)))
	}
	return check.Passed(figure)
}

// probeShelves plays the probe of two shelves: it returns how many of the
// probe reads of the slow shelf start a recompute, and in how many shops
// the fast shelf was queried.
func probeShelves(h *harness.H, newShop New) (fired, fastRan int, err error) {
	w := newWorld(h)
	src := newSource(shelfConfig.seed, false)
	sc := dbScene{costs: map[string]time.Duration{catalog.Bestsellers: slowCost, catalog.NewReleases: fastCost}}
	for range shelfProbes {
		w.openScene(newShop, shelfConfig, src.draw, sc)
	}
	fill := func(shelf string, cost time.Duration) error {
		c := harness.Visit(h, shelfProbes, func(ctx context.Context, i int) (struct{}, error) {
			_, err := w.shops[i].Top(ctx, shelf)
			return struct{}{}, err
		})
		err := c.Settle()
		if err == nil {
			err = w.until(w.clk.Now().Add(cost))
		}
		if err == nil {
			err = c.Wait()
		}
		if err != nil {
			return err
		}
		for _, o := range c.Outcomes() {
			if o.Panic != "" || o.Err != nil {
				return fmt.Errorf("a reader filling the %s failed: %v%s", shelf, o.Err, o.Panic)
			}
		}
		return nil
	}
	if err := fill(catalog.Bestsellers, slowCost); err != nil {
		return 0, 0, err
	}
	if err := fill(catalog.NewReleases, fastCost); err != nil {
		return 0, 0, err
	}
	at := opening.Add(slowCost + shelfConfig.ttl - shelfLeft)
	if err := w.until(at); err != nil {
		return 0, 0, err
	}
	err = w.drive(func(i int) (event, bool) {
		return event{at: at, shop: i, shelf: catalog.Bestsellers}, i < shelfProbes
	})
	if err != nil {
		return 0, 0, err
	}
	qs, _ := w.snapshot()
	ran := map[int]bool{}
	for _, q := range qs {
		switch {
		case q.shelf == catalog.Bestsellers && q.start.Equal(at):
			fired++
		case q.shelf == catalog.NewReleases:
			ran[q.shop] = true
		}
	}
	return fired, len(ran), w.finish()
}
