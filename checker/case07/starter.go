package case07

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"stampede/checker/check"
	"stampede/checker/harness"
	"stampede/shop/catalog"
)

// starterInfo describes the starter-leaves check.
var starterInfo = check.Info{
	ID:   "starter-leaves",
	Name: "when the reader who started a recompute on a miss leaves, the readers waiting on it still get the list",
	Catches: "a recompute started on a miss (the first fill, or a list that expired) run on the context of the " +
		"reader who started it, so that the reader's leaving cancels the query for every reader waiting on it",
}

// waiters is how many readers join the recompute the leaving reader
// started.
const waiters = 8

// StarterLeaves checks that a recompute started on a miss belongs to every
// reader waiting on it, not to the reader who started it. One reader finds
// the cache empty and starts the recompute, whose query the gate holds;
// eight more arrive and wait on it. Then the first reader leaves: its
// context is cancelled, as a server cancels a request whose client hung
// up. Once the process is at rest the gate opens. The eight must get the
// list, and a reader after them must be served it from the cache at once.
//
// The reader who left may get its context's error, or stay for the list.
// The eight may be served by the recompute that was started, or, in a shop
// whose miss runs the query in the reader under a lock per shelf (a right
// design), by a second query started by the next reader in line once the
// first one's ended with its reader: the count of queries is not judged,
// only that no reader who stayed was given the leaver's cancellation.
func StarterLeaves(h *harness.H, newShop New) check.Verdict {
	w := newWorld(h)
	cfg := traffic.shop
	gate := harness.NewGate()
	defer gate.Open()
	k := w.openScene(newShop, cfg, newSource(cfg.seed, false).draw, dbScene{gate: gate})
	shop := w.shops[k]
	read := func(ctx context.Context, _ int) ([]string, error) { return shop.Top(ctx, catalog.Bestsellers) }

	ctx, leave := context.WithCancel(h.Context())
	defer leave()
	starter := harness.Visit(h, 1, func(context.Context, int) ([]string, error) { return read(ctx, 0) })
	if err := starter.Settle(); err != nil {
		return failed(err)
	}
	if n := len(w.queriesSoFar()); n != 1 || starter.Done() {
		return check.Skipped(fmt.Sprintf("the first reader on an empty cache started %d queries and %s: "+
			"the scene needs one query, held, with its reader waiting for it", n,
			map[bool]string{true: "returned at once", false: "waited"}[starter.Done()]))
	}
	others := harness.Visit(h, waiters, read)
	if err := others.Settle(); err != nil {
		return failed(err)
	}
	leave()
	if err := w.rest(); err != nil {
		return failed(err)
	}
	gate.Open()
	all := func() bool { return starter.Done() && others.Done() }
	if err := w.driver.Drive(all, 10*cfg.cost); err != nil {
		if errors.Is(err, harness.ErrNoBound) {
			return check.Failed("", fmt.Sprintf("the reader who started the recompute on an empty cache left while "+
				"its query was held; once the query was let go, %s of the shop's time later some of the %d readers "+
				"waiting on it were still waiting: %s", secs(10*cfg.cost), waiters, others.Where()))
		}
		return failed(err)
	}
	if p := starter.Panicked(); p != "" {
		return check.Failed("", "the reader who started the recompute and left panicked: "+p)
	}
	if out := starter.Outcomes()[0]; out.Err != nil && !errors.Is(out.Err, context.Canceled) {
		return check.Failed("", fmt.Sprintf("the reader who started the recompute and left got %v, "+
			"neither the list nor its context's error", out.Err))
	}
	if p := others.Panicked(); p != "" {
		return check.Failed("", "a reader waiting on the recompute panicked: "+p)
	}
	want := catalog.Books(catalog.Bestsellers)
	errs, wrong := 0, 0
	var first error
	for _, o := range others.Outcomes() {
		switch {
		case o.Err != nil:
			errs++
			first = firstErr(first, o.Err)
		case !slices.Equal(o.Value, want):
			wrong++
		}
	}
	queries := len(w.queriesSoFar())
	figure := fmt.Sprintf("%d of %d readers who stayed got the list, %d %s", waiters-errs-wrong, waiters, queries,
		map[bool]string{true: "query", false: "queries"}[queries == 1])
	switch {
	case errs > 0:
		return check.Failed(figure, fmt.Sprintf("the reader who started the recompute on an empty cache left while its "+
			"query ran (its context was cancelled), and %d of the %d readers waiting on that recompute got an error: %v. "+
			"The recompute belongs to everyone waiting on it: run its query on a context the starter's leaving does not "+
			"reach, context.WithoutCancel(ctx), on a miss as for an early recompute", errs, waiters, first))
	case wrong > 0:
		return check.Failed(figure, fmt.Sprintf("the reader who started the recompute on an empty cache left, and %d of "+
			"the %d readers waiting on it got something other than the database's list", wrong, waiters))
	}
	// The list must have been stored: a reader now is served it at once.
	// (Whether its draw starts an early recompute is not this check's
	// business.)
	later := harness.Visit(h, 1, read)
	if err := later.Settle(); err != nil {
		return failed(err)
	}
	served := later.Done()
	if err := w.driver.Drive(later.Done, 10*cfg.cost); err != nil {
		return failed(err)
	}
	if p := later.Panicked(); p != "" {
		return check.Failed(figure, "the reader after the readers who stayed panicked: "+p)
	}
	if out := later.Outcomes()[0]; !served || out.Err != nil || !slices.Equal(out.Value, want) {
		return check.Failed(figure, "after the readers who stayed got the list, the next reader was not served it "+
			"from the cache at once: the list the recompute brought back must be stored, whoever started it")
	}
	return check.Passed(figure + "; the next reader was served from the cache")
}

// firstErr returns a if it is not nil, and b otherwise.
func firstErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}
