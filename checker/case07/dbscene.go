package case07

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"stampede/checker/harness"
	"stampede/shop/catalog"
)

// dbScene is how a scene's database behaves beyond open's: a cost of its
// own for some shelves, a gate that holds queries, and queries that fail.
type dbScene struct {
	// costs gives a shelf's query a cost of its own; a shelf not named
	// costs the shop's cfg.cost. The catalog has one cost for every
	// shelf, so the hook sleeps the shelf's cost on the world's clock
	// itself, as the catalog would, and the catalog adds none.
	costs map[string]time.Duration
	// gate, when set, holds every query before it begins to cost time,
	// until the gate opens or the query's context ends.
	gate *harness.Gate
	// fails reports whether query number n of the shop (from 1) fails:
	// it takes its cost, then returns errQueryFailed, as a query that
	// times out in the database does.
	fails func(n int) bool
}

// errQueryFailed is what a failing query of a dbScene returns, wrapped by
// the catalog.
var errQueryFailed = errors.New("catalog driver: connection reset by peer")

// openScene is openWith with a database that behaves as sc says. Each
// query is recorded as open's are, in the order the queries begin, with
// the end its cost gives it (a query held at the gate ends later than
// recorded; the scenes that hold one do not read the times).
func (w *world) openScene(newShop New, cfg shopConfig, random func() float64, sc dbScene) int {
	k := len(w.shops)
	count := 0 // queries begun, guarded by w.mu
	hook := func(ctx context.Context, shelf string) error {
		by := -1
		if current, ok := ctx.Value(readKey{}).(*atomic.Int64); ok {
			by = int(current.Load())
		}
		if by >= 0 {
			w.alert(by)
		}
		cost, ok := sc.costs[shelf]
		if !ok {
			cost = cfg.cost
		}
		now := w.clk.Now()
		w.mu.Lock()
		count++
		n := count
		w.queries = append(w.queries, query{shop: k, shelf: shelf, start: now, end: now.Add(cost), by: by})
		w.mu.Unlock()
		if sc.gate != nil {
			if err := sc.gate.Wait(ctx); err != nil {
				return err
			}
		}
		if err := w.clk.Sleep(ctx, cost); err != nil {
			return err
		}
		if sc.fails != nil && sc.fails(n) {
			return errQueryFailed
		}
		return nil
	}
	db := catalog.New(catalog.WithCost(0), catalog.WithClock(w.clk), catalog.WithHook(hook))
	w.shops = append(w.shops, newShop(db, w.clk, random, cfg.ttl, cfg.beta))
	return k
}
