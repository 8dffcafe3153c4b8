// Package case05 is case 5 of the lab, the fetch that fails: its story for
// `shop run 5` and its checks for `shop check 5`.
package case05

import (
	"context"
	"io"

	"stampede/checker/check"
	"stampede/checker/explore"
	"stampede/checker/harness"
	"stampede/checker/shelves"
	"stampede/shop/catalog"
)

// Case describes case 5.
var Case = check.Case{
	Number:  5,
	Points:  8, // error paths: panics, cancelled callers, nothing cached on failure
	Title:   "The fetch that fails",
	Chapter: "docs/05-fetch-that-fails.md",
	Summary: "The database fails the bestseller query, and the visitors waiting for it wait for ever.",
	Checks: []check.Info{
		{ID: "returns", Name: "when the query fails, every visitor returns",
			Catches: "a lock the error path never releases: one visitor gets the error, the rest wait for ever"},
		{ID: "shared-error", Name: "the visitors of a failed query share its error: the database is not asked again by each waiter",
			Catches: "a per-shelf lock whose waiters query again in turn, one failing query per visitor"},
		{ID: "not-cached", Name: "the failure is not cached: once the database is back, the next visitor gets the list",
			Catches: "a cache or a flight table that keeps the error as if it were the answer"},
		{ID: "panic", Name: "a panic in the query reaches every visitor as an error or a panic, never a hang or a crash",
			Catches: "cleanup that is not deferred, and a query on a goroutine nobody recovers (singleflight's DoChan re-panics there)"},
		goexitInfo,
		{ID: "give-up", Name: "a visitor who gives up returns at once with its context's error; the query goes on for the others",
			Catches: "waiters that cannot be cancelled: parked in sync.Mutex.Lock, or on a done channel without ctx.Done()"},
		{ID: "starter-gives-up", Name: "when the visitor who started the query gives up, the others still get the list from that one query",
			Catches: "a query run on its starter's context, so that one impatient visitor cancels it for everyone"},
		{ID: "once", Name: "with the database up, the query runs once and later visitors are served from the cache",
			Catches: "carried over from case 1: a stampede, waiters that query on a timer of their own, and a flight whose answer is never cached"},
		{ID: "two-shelves", Name: "with every shelf asked for at once, each shelf has its own flight and its own list",
			Catches: "carried over from case 1: a flight table keyed by something other than the shelf (one flight for all, a hash modulo a few slots)"},
		{ID: "apart", Name: "no shelf waits for another shelf's query",
			Catches: "carried over from case 2: a lock held across the query that several shelves share, such as one query at a time for the whole shop"},
		{ID: "race", Name: "no data race, also while queries fail and panic", Race: true,
			Catches: "a flight's result written after its done channel is closed, such as a recover deferred before the close, and a race on the error path"},
		explore.Info,
	},
	Hints: []string{
		"Run it and follow the first visitor: it gets the error and returns. Which line does it skip on its way out, and who was waiting for that line?",
		"Every way out of the code that holds the lock must release it: the error, the early return, and a panic too. Go has a statement for exactly that.",
		"With the lock released, the waiters find the cache empty and query again, one after another. They waited for one query; give them its result, error included, and keep nothing of the failure once they have it.",
		"A waiter parked in sync.Mutex.Lock cannot hear its context. Wait on a channel instead, in a select with ctx.Done(), and run the query on a context that its starter's cancellation does not reach: context.WithoutCancel.",
		"A flight table with a done channel per shelf does all of this; land the flight in a deferred function that also recovers a panic. Compare with solutions/case05/shop.go.",
	},
}

// Shop is what a case 5 implementation offers.
type Shop = shelves.Shop

// Bind binds case 5 to an implementation's constructor.
func Bind[S Shop](newShop func(*catalog.DB) S) harness.Bound {
	mk := func(db *catalog.DB) shelves.Shop { return newShop(db) }
	return harness.Bound{
		Scenario: func(ctx context.Context, w io.Writer, args []string) error {
			return Scenario(ctx, w, args, mk)
		},
		Checks: map[string]func(*harness.H) check.Verdict{
			"returns":          func(h *harness.H) check.Verdict { return Returns(h, mk) },
			"shared-error":     func(h *harness.H) check.Verdict { return SharedError(h, mk) },
			"not-cached":       func(h *harness.H) check.Verdict { return NotCached(h, mk) },
			"panic":            func(h *harness.H) check.Verdict { return Panics(h, mk) },
			"goexit":           func(h *harness.H) check.Verdict { return Goexits(h, mk) },
			"give-up":          func(h *harness.H) check.Verdict { return GiveUp(h, mk) },
			"starter-gives-up": func(h *harness.H) check.Verdict { return StarterGivesUp(h, mk) },
			"once":             func(h *harness.H) check.Verdict { return shelves.QueriedOnce(h, mk) },
			"two-shelves":      func(h *harness.H) check.Verdict { return shelves.EachShelfOnce(h, mk) },
			"apart":            func(h *harness.H) check.Verdict { return shelves.Apart(h, mk) },
			"race":             func(h *harness.H) check.Verdict { return Race(h, mk) },
			"explore":          func(h *harness.H) check.Verdict { return explore.Check(h, mk, explore.Case5) },
		},
	}
}

// Race runs the race detector's workloads: the healthy ones of case 1, then
// a database whose queries fail and panic under crowds of visitors, and
// comes back.
func Race(h *harness.H, newShop shelves.New) check.Verdict {
	if v := shelves.Busy(h, newShop); !v.Pass {
		return v
	}
	return shelves.Failing(h, newShop, shelves.Faults{Crowds: true, Panics: true})
}
