// Package case04 is case 4 of the lab, the unguarded first look: its story
// for `shop run 4` and its checks for `shop check 4`.
package case04

import (
	"context"
	"flag"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"stampede/checker/check"
	"stampede/checker/explore"
	"stampede/checker/harness"
	"stampede/checker/shelves"
	"stampede/shop/catalog"
)

// checks are the case's checks, each written once, in the order the report
// prints them: what it checks and catches, and the function that decides it.
var checks = append([]harness.Check[shelves.New]{
	{Info: check.Info{ID: "served", Name: "all 50 visitors get the bestseller list, and it is the database's list",
		Catches: "a look that upgrades a read lock to a write lock and deadlocks, waiters that return nothing or give up on a timer, and hits that return other than the cached list"}, Run: harness.OneAtATime(shelves.Served)},
	{Info: check.Info{ID: "once", Name: "the query runs once, not once per visitor, and later visitors are served from the cache",
		Catches: "a fix that guards the map and drops single-flight, and a burst coalesced but never cached"}, Run: harness.OneAtATime(shelves.QueriedOnce)},
	{Info: check.Info{ID: "hit-apart", Name: "a hit does not wait for a slow query of another shelf, even with a fill waiting to write",
		Catches: "a fill that holds the cache's write lock across the query, or its read lock (a waiting writer then stops every hit)"}, Run: harness.OneAtATime(HitApart)},
	{Info: check.Info{ID: "hits-shared", Varies: true, Name: "hits do not wait for each other",
		Catches: "the cache read under a plain sync.Mutex or the write side of an RWMutex, hits that take the shelf's fetch lock, a one-token channel used as a lock, and an owner goroutine serving hits one at a time"}, Run: HitsShared},
	{Info: check.Info{ID: "two-shelves", Name: "with every shelf asked for at once, each shelf is queried once and gets its own list",
		Catches: "carried over from cases 1 and 2: single-flight that ignores the shelf, and a table with fewer slots than shelves"}, Run: harness.OneAtATime(shelves.EachShelfOnce)},
	{Info: check.Info{ID: "apart", Name: "no shelf waits for another shelf's query",
		Catches: "carried over from case 2: one lock for the whole shop, or a shelf's lock shared with others, held across the query"}, Run: harness.OneAtATime(shelves.Apart)},
	{Info: nestedInfo, Run: NestedRLock},
	{Info: check.Info{ID: "race", Varies: true, Name: "no data race", Race: true,
		Catches: "the cache map read or written with no lock, as the textbook's fast path does, and a second look without the cache's lock"}, Run: Readers},
}, explore.Checks(explore.Case4)...)

// Case describes case 4.
var Case = check.Case{
	Number:   4,
	Points:   8, // the memory model: a read needs a lock too
	Title:    "The unguarded first look",
	Chapter:  "docs/04-unguarded-first-look.md",
	Summary:  "Hits read the cache map with no lock while a fill writes it: a data race, and in Go a crash.",
	Breaks:   "the textbook fast path in Go: a map read with no lock",
	Lesson:   "Go has no interpreter lock: every read of a shared map needs a guard, and a read lock lets hits share it",
	Timeline: check.SceneEvents,
	Checks:   harness.Infos(checks),
	Hints: []string{
		"Run it and read the race report: which two lines does it name, and which goroutines run them?",
		"Holding the shelf's lock keeps out the other fetchers of that shelf, but the visitors of other shelves read and write the same map. In Go every access to a shared map needs a guard that all of them take.",
		"A plain sync.Mutex around the looks makes the race go away and makes every hit queue behind every other hit. Which lock lets any number of readers in at once, and keeps them out only while a writer writes?",
		"Take the write side only for the map write itself, after the query, never around the query: hits on other shelves must not wait for a slow database.",
		"Both looks read the map, so both take the read lock; the fill takes the write lock for one line. sync.Map, or an atomic pointer to a map that is never changed once published, also work. Compare with solutions/case04/shop.go.",
	},
}

// Shop is what a case 4 implementation offers.
type Shop = shelves.Shop

// Bind binds case 4 to an implementation's constructor.
func Bind[S Shop](newShop func(*catalog.DB) S) harness.Bound {
	return shelves.Bind(newShop, checks, Scenario)
}

// Scenario plays the story: the bestseller list is in the cache and the
// visitors read it over and over, while the two other shelves are filled
// for the first time; each query takes 0.2 s of real time.
func Scenario(ctx context.Context, w io.Writer, args []string, newShop shelves.New) error {
	fs := flag.NewFlagSet("run 4", flag.ContinueOnError)
	visitors := fs.Int("visitors", 40, "how many visitors browse the bestseller list")
	seed := fs.Uint64("seed", 0, "play the explorer's scene of this seed (from a failed explore check) instead of the story")
	lanes := fs.Bool("timeline", false, "with --seed, show every event of the scene")
	if err := harness.ParseFlags(fs, args, w); err != nil {
		return err
	}
	if *seed != 0 {
		return explore.Story(ctx, w, newShop, explore.Case4, *seed, *lanes)
	}
	db := catalog.New()
	shop := newShop(db)

	fmt.Fprintf(w, "The bestseller list is in the cache. %d visitors browse it, reloading it\n", *visitors)
	fmt.Fprintf(w, "as fast as they can, while the new releases and the staff picks are\n")
	fmt.Fprintf(w, "loaded for the first time (each query takes %.1f s).\n\n", catalog.QueryCost.Seconds())

	if _, err := shop.Top(ctx, catalog.Bestsellers); err != nil {
		return fmt.Errorf("filling the bestseller list: %w", err)
	}
	began := time.Now()
	var (
		hits, wrong atomic.Int64
		fills       sync.WaitGroup
		browsers    sync.WaitGroup
		filled      = make(chan struct{})
	)
	want := catalog.Books(catalog.Bestsellers)
	for range *visitors {
		browsers.Add(1)
		go func() {
			defer browsers.Done()
			for {
				select {
				case <-filled:
					return
				default:
				}
				books, err := shop.Top(ctx, catalog.Bestsellers)
				if err != nil || len(books) != len(want) {
					wrong.Add(1)
				}
				hits.Add(1)
			}
		}()
	}
	for _, shelf := range []string{catalog.NewReleases, catalog.StaffPicks} {
		fills.Add(1)
		go func() {
			defer fills.Done()
			if _, err := shop.Top(ctx, shelf); err != nil {
				wrong.Add(1)
			}
		}()
	}
	fills.Wait()
	close(filled)
	browsers.Wait()
	took := time.Since(began)

	fmt.Fprintf(w, "  bestseller hits served:  %d in %.2f s\n", hits.Load(), took.Seconds())
	fmt.Fprintf(w, "  queries:                 bestsellers %d, new releases %d, staff picks %d\n",
		db.Queries(catalog.Bestsellers), db.Queries(catalog.NewReleases), db.Queries(catalog.StaffPicks))
	if n := wrong.Load(); n > 0 {
		fmt.Fprintf(w, "  wrong answers or errors: %d\n", n)
	}
	fmt.Fprintf(w, "\nThe race detector watched every read. If it saw a read and a write of the\n")
	fmt.Fprintf(w, "cache that nothing put in order, its report follows.\n")
	return nil
}
