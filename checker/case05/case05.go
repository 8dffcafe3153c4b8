// Package case05 is case 5 of the lab, the fetch that fails: its story for
// `shop run 5` and its checks for `shop check 5`.
package case05

import (
	"stampede/checker/check"
	"stampede/checker/explore"
	"stampede/checker/harness"
	"stampede/checker/shelves"
	"stampede/shop/catalog"
)

// checks are the case's checks, each written once, in the order the report
// prints them: what it checks and catches, and the function that decides it.
var checks = append([]harness.Check[shelves.New]{
	{Info: check.Info{ID: "returns", Name: "when the query fails, every visitor returns",
		Catches: "a lock the error path never releases: one visitor gets the error, the rest wait for ever"}, Run: harness.OneAtATime(Returns)},
	{Info: check.Info{ID: "shared-error", Name: "the visitors of a failed query share its error: the database is not asked again by each waiter",
		Catches: "a per-shelf lock whose waiters query again in turn, one failing query per visitor"}, Run: harness.OneAtATime(SharedError)},
	{Info: check.Info{ID: "not-cached", Name: "the failure is not cached: once the database is back, the next visitor gets the list",
		Catches: "a cache or a flight table that keeps the error as if it were the answer"}, Run: harness.OneAtATime(NotCached)},
	{Info: check.Info{ID: "panic", Name: "a panic in the query reaches every visitor as an error or a panic, never a hang or a crash",
		Catches: "cleanup that is not deferred, and a query on a goroutine nobody recovers (singleflight's DoChan re-panics there)"}, Run: harness.OneAtATime(Panics)},
	{Info: goexitInfo, Run: harness.OneAtATime(Goexits)},
	{Info: check.Info{ID: "give-up", Name: "a visitor who gives up returns at once with its context's error; the query goes on for the others",
		Catches: "waiters that cannot be cancelled: parked in sync.Mutex.Lock, or on a done channel without ctx.Done()"}, Run: harness.OneAtATime(GiveUp)},
	{Info: check.Info{ID: "starter-gives-up", Name: "when the visitor who started the query gives up, the others still get the list from that one query",
		Catches: "a query run on its starter's context, so that one impatient visitor cancels it for everyone"}, Run: harness.OneAtATime(StarterGivesUp)},
	{Info: check.Info{ID: "once", Name: "with the database up, the query runs once and later visitors are served from the cache",
		Catches: "carried over from case 1: a stampede, waiters that query on a timer of their own, and a flight whose answer is never cached"}, Run: harness.OneAtATime(shelves.QueriedOnce)},
	{Info: check.Info{ID: "two-shelves", Name: "with every shelf asked for at once, each shelf has its own flight and its own list",
		Catches: "carried over from case 1: a flight table keyed by something other than the shelf (one flight for all, a hash modulo a few slots)"}, Run: harness.OneAtATime(shelves.EachShelfOnce)},
	{Info: check.Info{ID: "apart", Name: "no shelf waits for another shelf's query",
		Catches: "carried over from case 2: a lock held across the query that several shelves share, such as one query at a time for the whole shop"}, Run: harness.OneAtATime(shelves.Apart)},
	{Info: check.Info{ID: "race", Name: "no data race, also while queries fail and panic", Race: true,
		Catches: "a flight's result written after its done channel is closed, such as a recover deferred before the close, and a race on the error path"}, Run: harness.OneAtATime(Race)},
}, explore.Checks(explore.Case5)...)

// Case describes case 5.
var Case = check.Case{
	Number:   5,
	Points:   8, // error paths: panics, cancelled callers, nothing cached on failure
	Title:    "The fetch that fails",
	Chapter:  "docs/05-fetch-that-fails.md",
	Summary:  "The database fails the bestseller query, and the visitors waiting for it wait for ever.",
	Breaks:   "the one query fails: who hangs, who retries, what gets cached",
	Lesson:   "a flight lands on every path, error or panic; its visitors share the outcome, nothing keeps the failure, and each visitor may give up alone",
	Timeline: check.VisitorLanes,
	Checks:   harness.Infos(checks),
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
	return shelves.Bind(newShop, checks, Scenario)
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
