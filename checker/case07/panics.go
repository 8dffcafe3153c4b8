package case07

import (
	"context"
	"fmt"
	"sync/atomic"

	"stampede/checker/check"
	"stampede/checker/harness"
	"stampede/shop/catalog"
)

// panicInfo describes the panic check. It lives here, not in Case's
// literal, so that the list of checks names it in one line.
var panicInfo = check.Info{
	ID:   "panic",
	Name: "a recompute that fails or panics neither crashes the shop nor stops the refreshes: the list is refreshed again",
	Catches: "a background recompute with no recover, where a panic ends the whole program, a recover that " +
		"leaves the flight in the table, so that no recompute ever starts again, and a query that returns an " +
		"error whose flight is left in the table, so that every reader after it gets that error for ever",
}

// panicValue is what the panicking query panics with.
const panicValue = "catalog driver: nil connection in pool"

// Panics plays the steady traffic of the other checks for four windows,
// with the second query, the first recompute after the fill, panicking.
// The shop must live on, and refresh the list again: some query after the
// panicking one must finish, and from then on every read must get the
// list, and the list must be fresh when the traffic ends. A read that gets
// an error, or a panic of its own, before the next good recompute has
// finished is allowed: it may have been the read that ran the query.
// Then it plays failingQueries: queries that return an error instead.
func Panics(h *harness.H, newShop New) check.Verdict {
	tr := traffic
	tr.span = 4 * tr.shop.ttl
	w := newWorld(h)
	if err := w.playOn(w.openPanicking(newShop, tr.shop, 2), tr); err != nil {
		return failed(err)
	}
	qs, rs := w.snapshot()
	if len(qs) < 2 {
		return check.Failed(fmt.Sprintf("%d queries", len(qs)), "the list was never recomputed in four windows")
	}
	panicked := qs[1]
	at := panicked.start.Sub(qs[0].end).Seconds()
	if len(qs) < 3 {
		return check.Failed("no recompute after the panic", fmt.Sprintf("the recompute that started %.1f s after the fill "+
			"panicked, and no recompute ever started again: the refreshes stopped. Recover the panic where the "+
			"query runs, and end its flight as a failure, so that the next lucky reader can start another", at))
	}
	next := qs[2]
	figure := fmt.Sprintf("%d recomputes after the one that panicked %.1f s after the fill", len(qs)-2, at)
	for i, r := range rs {
		if r.arrived.Before(next.end) {
			continue
		}
		switch {
		case r.err != nil:
			return check.Failed(figure, fmt.Sprintf("read %d, after the shop had recomputed again, got an error: %v", i+1, r.err))
		case r.wrong != nil:
			return check.Failed(figure, fmt.Sprintf("read %d, after the shop had recomputed again, got %q", i+1, r.wrong))
		}
	}
	good := history{ttl: tr.shop.ttl, qs: append([]query{qs[0]}, qs[2:]...)}
	if last := rs[len(rs)-1]; !good.freshAt(last.arrived) {
		return check.Failed(figure, "when the traffic ended the list had expired and not been refreshed: the refreshes stopped after the panic")
	}
	v := failingQueries(h, newShop)
	if !v.Pass {
		return v
	}
	return check.Passed(figure + "; " + v.Figure)
}

// openPanicking is open with a database whose query number bad (from 1)
// panics. The hook records the query as open's does, with no duration,
// then panics on the goroutine that runs the query. The shop is wrapped so
// that a panic that reaches a reader becomes that read's error.
func (w *world) openPanicking(newShop New, cfg shopConfig, bad int64) int {
	k := len(w.shops)
	var count atomic.Int64
	hook := func(ctx context.Context, shelf string) error {
		by := -1
		if current, ok := ctx.Value(readKey{}).(*atomic.Int64); ok {
			by = int(current.Load())
		}
		if by >= 0 {
			w.alert(by)
		}
		now := w.clk.Now()
		end := now.Add(cfg.cost)
		fail := count.Add(1) == bad
		if fail {
			end = now
		}
		w.mu.Lock()
		w.queries = append(w.queries, query{shop: k, shelf: shelf, start: now, end: end, by: by})
		w.mu.Unlock()
		if fail {
			panic(panicValue)
		}
		return nil
	}
	db := catalog.New(catalog.WithCost(cfg.cost), catalog.WithClock(w.clk), catalog.WithHook(hook))
	w.shops = append(w.shops, recovering{newShop(db, w.clk, newRandom(cfg.seed), cfg.ttl, cfg.beta)})
	return k
}

// recovering turns a panic that reaches a reader into the read's error:
// a server would answer that one request with an error and go on.
type recovering struct{ Shop }

func (r recovering) Top(ctx context.Context, shelf string) (books []string, err error) {
	defer func() {
		if p := recover(); p != nil {
			books, err = nil, fmt.Errorf("the read panicked: %v", p)
		}
	}()
	return r.Shop.Top(ctx, shelf)
}
