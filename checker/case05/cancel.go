package case05

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"stampede/checker/check"
	"stampede/checker/harness"
	"stampede/checker/shelves"
	"stampede/checker/stack"
	"stampede/shop/catalog"
)

// flight is a bestseller query held at a gate, with the visitor who
// started it and the visitors who joined it.
type flight struct {
	h       *harness.H
	db      *catalog.DB
	gate    *harness.Gate
	shop    shelves.Shop
	starter *harness.Crowd[[]string]
	stop    context.CancelFunc // cancels the starter's context
	joiners *harness.Crowd[[]string]
}

// takeOff sends one visitor, waits until its query is held at the gate,
// then sends n more who join it. The first visitor to miss an empty cache
// is the one whose query runs, however the shop is written.
func takeOff(h *harness.H, newShop shelves.New, n int) (*flight, check.Verdict) {
	f := &flight{h: h, gate: harness.NewGate()}
	f.db = catalog.New(catalog.WithCost(0), catalog.WithHook(f.gate.Hold(catalog.Bestsellers)))
	f.shop = newShop(f.db)
	ctx, stop := context.WithCancel(h.Context())
	f.stop = stop
	f.starter = harness.Visit(h, 1, func(context.Context, int) ([]string, error) {
		return f.shop.Top(ctx, catalog.Bestsellers)
	})
	if err := f.starter.Settle(); err != nil {
		return f, shelves.Stuck(err)
	}
	if q := f.db.Queries(catalog.Bestsellers); q != 1 {
		return f, check.Failed(fmt.Sprintf("ran %d", q), "the first visitor on an empty cache should start one query: "+f.starter.Where())
	}
	f.joiners = harness.Visit(h, n, top(f.shop))
	if err := f.joiners.Settle(); err != nil {
		return f, shelves.Stuck(err)
	}
	return f, check.Passed("")
}

// land opens the gate and waits for every visitor.
func (f *flight) land() error {
	f.gate.Open()
	if err := f.starter.Wait(); err != nil {
		return err
	}
	if f.joiners != nil {
		return f.joiners.Wait()
	}
	return nil
}

// end cleans up after a check that stopped early.
func (f *flight) end() {
	f.stop()
	_ = f.land()
}

// GiveUp checks that a visitor who joined a flight and whose context is
// cancelled returns at once, with the context's error, while the query is
// still held at the gate; and that the query goes on for the others. It
// catches waiters that cannot be cancelled: parked in sync.Mutex.Lock, or
// receiving from a done channel without watching ctx.Done().
func GiveUp(h *harness.H, newShop shelves.New) check.Verdict {
	f, v := takeOff(h, newShop, shelves.Visitors-2)
	defer f.end()
	if !v.Pass {
		return v
	}
	ctx, cancel := context.WithCancel(h.Context())
	impatient := harness.Visit(h, 1, func(context.Context, int) ([]string, error) {
		return giveUp(ctx, f.shop)
	})
	if err := impatient.Settle(); err != nil {
		cancel()
		return shelves.Stuck(err)
	}
	cancel()
	// "At once" is decided by settling, not by a clock: a visitor that
	// waits on its context's Done channel has returned by the time the
	// process is at rest. One asleep in a polling loop has not.
	if err := h.Settled(func() bool { return true }); err != nil {
		return shelves.Stuck(err)
	}
	if !impatient.Done() {
		msg := "the visitor's context was cancelled while the query was held, and it was still waiting once the shop had come to rest: " + impatient.Where()
		if state := impatientState(); stack.Timed(state) {
			msg += " (asleep or on a timer: a loop that looks at ctx.Err() now and then notices late; wait in a select on ctx.Done() and the flight's done channel)"
		}
		return check.Failed("still waiting", msg)
	}
	out := impatient.Outcomes()[0]
	switch {
	case out.Panic != "":
		return check.Failed("", "the visitor who gave up panicked: "+out.Panic)
	case !errors.Is(out.Err, context.Canceled):
		return check.Failed("", fmt.Sprintf("the visitor who gave up got %q and error %v, not its context's error", out.Value, out.Err))
	}
	if err := f.land(); err != nil {
		return shelves.Stuck(err)
	}
	v = others(f, "after one of them gave up", append(f.starter.Outcomes(), f.joiners.Outcomes()...))
	if !v.Pass {
		return v
	}
	return after(v, shelves.Later(h, f.shop, f.db, catalog.Bestsellers))
}

// giveUp is the impatient visitor's call, named so that its goroutine can
// be found in a snapshot.
func giveUp(ctx context.Context, shop shelves.Shop) ([]string, error) {
	return shop.Top(ctx, catalog.Bestsellers)
}

// impatientState returns the state of the goroutine running giveUp.
func impatientState() string {
	for _, g := range stack.All() {
		if slices.ContainsFunc(g.Frames, func(fr stack.Frame) bool { return strings.HasSuffix(fr.Func, "case05.giveUp") }) {
			return g.State
		}
	}
	return ""
}

// StarterGivesUp checks that when the visitor who started the query gives
// up, the query goes on and everyone who joined it gets the list from that
// one query. It catches a query run on the starter's own context: its
// cancellation fails the query for all, or makes the next in line query
// again.
func StarterGivesUp(h *harness.H, newShop shelves.New) check.Verdict {
	f, v := takeOff(h, newShop, shelves.Visitors-1)
	defer f.end()
	if !v.Pass {
		return v
	}
	f.stop()
	if err := h.Settled(func() bool { return true }); err != nil {
		return shelves.Stuck(err)
	}
	// Visitors who arrive after the starter left, while its query is
	// still held, must join that query, not start one of their own.
	late := harness.Visit(h, shelves.LaterVisitors, top(f.shop))
	defer func() { _ = late.Wait() }()
	if err := late.Settle(); err != nil {
		return shelves.Stuck(err)
	}
	if q := f.db.Queries(catalog.Bestsellers); q > 1 {
		return check.Failed(fmt.Sprintf("ran %d", q), fmt.Sprintf(
			"the visitor who started the query gave up while it ran, and of the %d visitors who arrived next, some started the query again "+
				"(%d queries): the flight must stay in the table, and its query go on, until it lands", shelves.LaterVisitors, q))
	}
	if err := f.land(); err != nil {
		return shelves.Stuck(err)
	}
	if err := late.Wait(); err != nil {
		return shelves.Stuck(err)
	}
	out := f.starter.Outcomes()[0]
	switch {
	case out.Panic != "":
		return check.Failed("", "the visitor who started the query and gave up panicked: "+out.Panic)
	case out.Err != nil && !errors.Is(out.Err, context.Canceled):
		return check.Failed("", fmt.Sprintf("the visitor who started the query and gave up got %v, neither the list nor its context's error", out.Err))
	}
	v = others(f, "after the visitor who started it gave up", append(f.joiners.Outcomes(), late.Outcomes()...))
	if !v.Pass {
		return v
	}
	return after(v, shelves.Later(h, f.shop, f.db, catalog.Bestsellers))
}

// others checks that the visitors still waiting all got the list from the
// one query.
func others(f *flight, when string, outs []harness.Outcome[[]string]) check.Verdict {
	q := f.db.Queries(catalog.Bestsellers)
	v := shelves.AllGot(outs, catalog.Books(catalog.Bestsellers))
	figure := fmt.Sprintf("ran %d, %s got the list", q, v.Figure)
	switch {
	case !v.Pass:
		return check.Failed(figure, when+", "+v.Message)
	case q > 1:
		return check.Failed(figure, fmt.Sprintf("%s, the query was started again: the database ran it %d times", when, q))
	}
	return check.Passed(figure)
}
