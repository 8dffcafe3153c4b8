// Package case02 is case 2 of the lab, one lock for the whole shop: its
// story for `shop run 2` and its checks for `shop check 2`.
package case02

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"sync"
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
	{Info: check.Info{ID: "two-shelves", Name: "with every shelf asked for at once, each shelf is queried once and gets its own list",
		Catches: "a per-shelf lock that still lets a shelf's waiters query, single-flight that ignores the shelf, and a table with fewer slots than shelves"}, Run: harness.OneAtATime(shelves.EachShelfOnce)},
	{Info: check.Info{ID: "apart", Name: "no shelf waits for another shelf's query",
		Catches: "one lock for the whole shop, or striped locks (a hash of the name modulo a few, a slot per name length), held across the slow query"}, Run: harness.OneAtATime(shelves.Apart)},
	{Info: check.Info{ID: "same-lock", Varies: true, Name: "visitors who ask for a shelf at the same instant share one lock, not one each",
		Catches: "a table of locks that makes a new lock for a shelf that has one, or looks for the lock and stores a new one in two separate critical sections"}, Run: shelves.SameLock},
	{Info: check.Info{ID: "served", Name: "all 50 visitors get the bestseller list, and it is the database's list",
		Catches: "carried over from case 1: waiters that give up on a timer shorter than the query, and hits that return other than the cached list"}, Run: harness.OneAtATime(shelves.Served)},
	{Info: check.Info{ID: "once", Name: "the query runs once, not once per visitor, and later visitors are served from the cache",
		Catches: "carried over from case 1: a stampede, waiters that query on a timer of their own, and a burst coalesced but never cached"}, Run: harness.OneAtATime(shelves.QueriedOnce)},
	{Info: check.Info{ID: "race", Name: "no data race", Race: true,
		Catches: "a table of locks read and written without a guard of its own, also on the error path"}, Run: harness.OneAtATime(shelves.Races)},
}, explore.Checks(explore.Case2)...)

// Case describes case 2.
var Case = check.Case{
	Number:   2,
	Points:   6, // a lock per shelf instead of one for the shop
	Title:    "One lock for the whole shop",
	Chapter:  "docs/02-global-lock.md",
	Summary:  "The stampede is gone, but the new-releases visitors now wait for the bestseller query.",
	Breaks:   "one lock for the whole shop: no stampede, but every shelf waits for the slowest",
	Lesson:   "one lock per key, never held across a slow call; the table of locks guarded, with look and make in one step",
	Timeline: check.VisitorLanes,
	Checks:   harness.Infos(checks),
	Hints: []string{
		"Run `go run ./shop run 2` and compare the new-releases visitors' wait with the time of their own query. What are they waiting for in the extra time?",
		"The shop's one mutex is held across the bestseller query, and every visitor, whatever shelf they want, takes that mutex first.",
		"A lock only needs to keep out the visitors who want the same thing: give each shelf its own lock, and hold it across that shelf's query only.",
		"The locks live in a map, and the map is shared: guard it with a mutex of its own, and look for the lock and make it in the same critical section, or two visitors can make two locks for one shelf.",
		"Keep the second look under the shelf's lock from case 1, and never hold the cache's mutex across a query. Compare with solutions/case02/shop.go.",
	},
}

// Shop is what a case 2 implementation offers.
type Shop = shelves.Shop

// Bind binds case 2 to an implementation's constructor.
func Bind[S Shop](newShop func(*catalog.DB) S) harness.Bound {
	return shelves.Bind(newShop, checks, Scenario)
}

// Scenario plays the story: at 09:00 the bestseller list and the new
// releases have both expired. The bestseller visitors arrive first; once
// their query has begun, the new-releases visitors arrive. Each query takes
// 0.2 s of real time.
func Scenario(ctx context.Context, w io.Writer, args []string, newShop shelves.New) error {
	fs := flag.NewFlagSet("run 2", flag.ContinueOnError)
	visitors := fs.Int("visitors", shelves.Visitors, "how many visitors want the bestsellers at 09:00")
	late := fs.Int("new", 10, "how many visitors want the new releases, once the bestseller query has begun")
	lanes := fs.Bool("timeline", false, "draw what each visitor did")
	seed := fs.Uint64("seed", 0, "play the explorer's scene of this seed (from a failed explore check) instead of the story")
	if err := harness.ParseFlags(fs, args, w); err != nil {
		return err
	}
	if *seed != 0 {
		return explore.Story(ctx, w, newShop, explore.Case2, *seed, *lanes)
	}
	if err := errors.Join(harness.Positive("visitors", *visitors), harness.Positive("new", *late)); err != nil {
		return err
	}

	began := time.Now()
	rec := timeline.New(began, catalog.QueryCost)
	var (
		mu        sync.Mutex
		newsBegan time.Time // when the first new-releases query began
	)
	bestBegan := make(chan struct{})
	var once sync.Once
	db := catalog.New(catalog.WithHook(func(ctx context.Context, shelf string) error {
		now := time.Now()
		rec.Query(ctx, now)
		switch shelf {
		case catalog.Bestsellers:
			once.Do(func() { close(bestBegan) })
		case catalog.NewReleases:
			mu.Lock()
			if newsBegan.IsZero() {
				newsBegan = now
			}
			mu.Unlock()
		}
		return nil
	}))
	shop := newShop(db)

	n := *visitors + *late
	arrived := make([]time.Time, n)
	served := make([]time.Time, n)
	errs := make([]error, n)
	visit := func(i int, shelf string) {
		arrived[i] = time.Now()
		vctx := rec.Arrive(ctx, i, arrived[i])
		_, errs[i] = shop.Top(vctx, shelf)
		served[i] = time.Now()
		rec.Answer(i, served[i])
	}

	var best, news sync.WaitGroup
	start := make(chan struct{})
	for i := range *visitors {
		best.Go(func() { <-start; visit(i, catalog.Bestsellers) })
	}
	close(start)
	// The new-releases visitors come once the bestseller query is running
	// (or, if the shop never queries, once the bestseller visitors are done).
	bestDone := make(chan struct{})
	go func() { best.Wait(); close(bestDone) }()
	select {
	case <-bestBegan:
	case <-bestDone:
	case <-ctx.Done():
		return ctx.Err()
	}
	for i := *visitors; i < n; i++ {
		news.Go(func() { visit(i, catalog.NewReleases) })
	}
	news.Wait()
	<-bestDone

	// The new-releases visitors' wait, and how much of it went by before
	// their own query began.
	var waited, before time.Duration
	firstServed := served[*visitors]
	for i := *visitors; i < n; i++ {
		waited = max(waited, served[i].Sub(arrived[i]))
		if served[i].Before(firstServed) {
			firstServed = served[i]
		}
	}
	arrivedNews := slices.MinFunc(arrived[*visitors:], time.Time.Compare)
	own := time.Duration(0)
	if !newsBegan.IsZero() {
		before = newsBegan.Sub(arrivedNews)
		own = firstServed.Sub(newsBegan)
	}

	failed := 0
	for _, err := range errs {
		if err != nil {
			failed++
		}
	}
	b, r := db.Queries(catalog.Bestsellers), db.Queries(catalog.NewReleases)
	fmt.Fprintf(w, "At 09:00 the bestseller list and the new releases have both expired.\n")
	fmt.Fprintf(w, "%d visitors arrive for the bestsellers; while their query runs, %d more arrive for the new releases.\n", *visitors, *late)
	fmt.Fprintf(w, "Each shelf's query takes %.1f s.\n\n", catalog.QueryCost.Seconds())
	fmt.Fprintf(w, "  bestseller queries:              %d\n", b)
	fmt.Fprintf(w, "  new-releases queries:            %d\n", r)
	fmt.Fprintf(w, "  new-releases query took:         %.2f s\n", own.Seconds())
	fmt.Fprintf(w, "  new-releases visitors waited:    %.2f s (the longest wait)\n", waited.Seconds())
	fmt.Fprintf(w, "    before their query even began: %.2f s%s\n", before.Seconds(), heldNote(before))
	if failed > 0 {
		fmt.Fprintf(w, "  visitors with errors:            %d\n", failed)
	}
	if *lanes {
		fmt.Fprintln(w)
		rec.Draw(w, 60, 12)
	}
	return nil
}

// heldNote explains a wait before the new-releases query began that is
// most of a query long: it can only have been spent behind the bestsellers.
func heldNote(before time.Duration) string {
	if before > catalog.QueryCost/2 {
		return "   (behind the bestseller query)"
	}
	return ""
}
