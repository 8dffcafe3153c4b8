// Package case01 is case 1 of the lab, the bestseller stampede: its story
// for `shop run 1` and its checks for `shop check 1`.
package case01

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"stampede/checker/check"
	"stampede/checker/explore"
	"stampede/checker/harness"
	"stampede/checker/shelves"
	"stampede/checker/timeline"
	"stampede/shop/catalog"
)

// checks are the case's checks, each written once, in the order the report
// prints them: what it checks and catches, and the function that decides it.
var checks = append([]harness.Check[shelves.New]{
	{Info: check.Info{ID: "served", Name: "all 50 visitors get the bestseller list, and it is the database's list",
		Catches: "waiters that give up on a timer shorter than the query and return nothing, an error or a list of their own, and hits that return other than the cached list"}, Run: harness.OneAtATime(shelves.Served)},
	{Info: check.Info{ID: "once", Name: "the query runs once, not once per visitor, and later visitors are served from the cache",
		Catches: "the stampede itself, a per-key lock with no second look, waiters that query on a timer of their own, and a burst coalesced but never cached"}, Run: harness.OneAtATime(shelves.QueriedOnce)},
	{Info: check.Info{ID: "two-shelves", Name: "with every shelf asked for at once, each shelf is queried once and gets its own list",
		Catches: "single-flight that ignores the key, a table with fewer slots than shelves (by name length, a hash modulo a few), and a stampede on any shelf"}, Run: harness.OneAtATime(shelves.EachShelfOnce)},
	{Info: check.Info{ID: "apart", Name: "no shelf waits for another shelf's query",
		Catches: "one lock for the whole shop, or striped locks shared by shelves, held across the slow query"}, Run: harness.OneAtATime(shelves.Apart)},
	{Info: check.Info{ID: "race", Name: "no data race", Race: true,
		Catches: "the cache map read outside a lock while another goroutine writes it, and a lock table without its own guard, also on the error path"}, Run: harness.OneAtATime(shelves.Busy)},
}, explore.Checks(explore.Case1)...)

// Case describes case 1.
var Case = check.Case{
	Number:   1,
	Points:   6, // single-flight with a second look: the idea the rest builds on
	Title:    "The bestseller stampede",
	Chapter:  "docs/01-bestseller-stampede.md",
	Summary:  "50 visitors find the bestseller list expired and each one queries the database.",
	Breaks:   "50 visitors find the bestseller list expired; each one queries the database",
	Lesson:   "check-then-act on a cache miss; single-flight with one lock per key and a second look",
	Timeline: check.VisitorLanes,
	Checks:   harness.Infos(checks),
	Hints: []string{
		"Read Top as fifty goroutines would, all at once. Which line do they all pass before any of them reaches the database?",
		"The visitors check the cache and then act on what they saw: check-then-act. Only one of them should act; the others should wait for its answer.",
		"Give each shelf its own lock. The first visitor to take it queries and fills the cache; the rest wait on that lock.",
		"When a waiter finally gets the lock, the list is already in the cache. Look again under the lock before querying: that second look is what turns 50 queries into 1.",
		"The table of locks is shared too: guard it with its own mutex, and read the cache under a lock (sync.RWMutex lets hits share it). Compare with solutions/case01/shop.go.",
	},
}

// Shop is what a case 1 implementation offers.
type Shop = shelves.Shop

// Bind binds case 1 to an implementation's constructor.
func Bind[S Shop](newShop func(*catalog.DB) S) harness.Bound {
	return shelves.Bind(newShop, checks, Scenario)
}

// Scenario plays the story: at 09:00 the bestseller list has expired and
// the visitors arrive at once; each query takes 0.2 s of real time.
func Scenario(ctx context.Context, w io.Writer, args []string, newShop shelves.New) error {
	fs := flag.NewFlagSet("run 1", flag.ContinueOnError)
	visitors := fs.Int("visitors", shelves.Visitors, "how many visitors arrive at 09:00")
	lanes := fs.Bool("timeline", false, "draw what each visitor did")
	seed := fs.Uint64("seed", 0, "play the explorer's scene of this seed (from a failed explore check) instead of the story")
	if err := harness.ParseFlags(fs, args, w); err != nil {
		return err
	}
	if *seed != 0 {
		return explore.Story(ctx, w, newShop, explore.Case1, *seed, *lanes)
	}
	if err := harness.Positive("visitors", *visitors); err != nil {
		return err
	}
	began := time.Now()
	rec := timeline.New(began, catalog.QueryCost)
	db := catalog.New(catalog.WithHook(func(ctx context.Context, _ string) error {
		rec.Query(ctx, time.Now())
		return nil
	}))
	shop := newShop(db)

	failed := shelves.Burst(ctx, shop, rec, catalog.Bestsellers, *visitors)
	took := time.Since(began)
	q := db.Queries(catalog.Bestsellers)
	fmt.Fprintf(w, "At 09:00 the cached bestseller list has expired, and %d visitors arrive at once.\n", *visitors)
	fmt.Fprintf(w, "The bestseller query takes %.1f s.\n\n", catalog.QueryCost.Seconds())
	fmt.Fprintf(w, "  visitors at 09:00:    %d\n", *visitors)
	fmt.Fprintf(w, "  bestseller queries:   %d%s\n", q, onceNote(q))
	fmt.Fprintf(w, "  database time spent:  %.1f s\n", db.Busy().Seconds())
	fmt.Fprintf(w, "  last visitor served:  after %.2f s\n", took.Seconds())
	if failed > 0 {
		fmt.Fprintf(w, "  visitors with errors: %d\n", failed)
	}
	if *lanes {
		fmt.Fprintln(w)
		rec.Draw(w, 60, 12)
	}
	return nil
}

func onceNote(q int) string {
	if q > 1 {
		return "   (one would have done)"
	}
	return ""
}
