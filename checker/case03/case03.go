// Package case03 is case 3 of the lab, the missing second look: its story
// for `shop run 3` and its checks for `shop check 3`.
package case03

import (
	"context"
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
	{Info: check.Info{ID: "once", Name: "the query runs once, not once per visitor, and later visitors are served from the cache",
		Catches: "a per-shelf lock whose waiters query again once they get it, the stampede itself, waiters that query on a timer of their own, and a burst coalesced but never cached"}, Run: harness.OneAtATime(shelves.QueriedOnce)},
	{Info: check.Info{ID: "one-round", Name: "the burst is served by one round of queries, not one round per visitor",
		Catches: "waiters that query one after another, each once the one before has answered"}, Run: harness.OneAtATime(shelves.OneRound)},
	{Info: check.Info{ID: "served", Name: "all 50 visitors get the bestseller list, and it is the database's list",
		Catches: "waiters that give up on a timer shorter than the query and return nothing, an error or a list of their own, and hits that return other than the cached list"}, Run: harness.OneAtATime(shelves.Served)},
	{Info: check.Info{ID: "two-shelves", Name: "with every shelf asked for at once, each shelf is queried once and gets its own list",
		Catches: "carried over from cases 1 and 2: single-flight that ignores the shelf, and a table with fewer slots than shelves"}, Run: harness.OneAtATime(shelves.EachShelfOnce)},
	{Info: check.Info{ID: "apart", Name: "no shelf waits for another shelf's query",
		Catches: "carried over from case 2: one lock for the whole shop, or striped locks shared by shelves"}, Run: harness.OneAtATime(shelves.Apart)},
	{Info: check.Info{ID: "race", Name: "no data race", Race: true,
		Catches: "a look at the cache map without holding its lock, also on the error path"}, Run: harness.OneAtATime(shelves.Races)},
}, explore.Checks(explore.Case3)...)

// Case describes case 3.
var Case = check.Case{
	Number:   3,
	Points:   6, // the second look, on its own
	Title:    "The missing second look",
	Chapter:  "docs/03-second-look.md",
	Summary:  "One lock per shelf, but every waiter queries once it gets the lock: the queries run one after another.",
	Breaks:   "a lock per shelf and no second look: fifty queries in a row",
	Lesson:   "a look made before waiting is stale after it: look again under the lock, and fill before unlocking",
	Timeline: check.VisitorLanes,
	Checks:   harness.Infos(checks),
	Hints: []string{
		"Run `go run ./shop run 3`: count the queries, and see when each one begins. What does a visitor do right after it gets the shelf's lock?",
		"Think of the second visitor in line. By the time the lock is its turn, what has the first visitor already done to the cache?",
		"The look at the cache before the lock told the visitor what was true before it waited. Waiting changes that.",
		"Look in the cache again once you hold the shelf's lock, and return what is there; query only if it is still missing. That second look must be under the lock, after the wait.",
		"Fill the cache before the lock is released, so the next holder's second look finds it. Compare with solutions/case03/shop.go.",
	},
}

// Shop is what a case 3 implementation offers.
type Shop = shelves.Shop

// Bind binds case 3 to an implementation's constructor.
func Bind[S Shop](newShop func(*catalog.DB) S) harness.Bound {
	return shelves.Bind(newShop, checks, Scenario)
}

// DefaultVisitors is how many visitors `run 3` sends by default: few
// enough that queries one after another end in about two seconds. The
// chapter works out the story's fifty; --visitors 50 plays it.
const DefaultVisitors = 10

// Scenario plays the story: at 09:00 the bestseller list has expired and
// the visitors arrive at once; each query takes 0.2 s of real time.
func Scenario(ctx context.Context, w io.Writer, args []string, newShop shelves.New) error {
	fs := flag.NewFlagSet("run 3", flag.ContinueOnError)
	visitors := fs.Int("visitors", DefaultVisitors, "how many visitors arrive at 09:00")
	lanes := fs.Bool("timeline", false, "draw what each visitor did")
	seed := fs.Uint64("seed", 0, "play the explorer's scene of this seed (from a failed explore check) instead of the story")
	if err := harness.ParseFlags(fs, args, w); err != nil {
		return err
	}
	if *seed != 0 {
		return explore.Story(ctx, w, newShop, explore.Case3, *seed, *lanes)
	}
	if err := harness.Positive("visitors", *visitors); err != nil {
		return err
	}

	began := time.Now()
	rec := timeline.New(began, catalog.QueryCost)
	var (
		mu     sync.Mutex
		starts []time.Time // when each query began
	)
	db := catalog.New(catalog.WithHook(func(ctx context.Context, _ string) error {
		now := time.Now()
		rec.Query(ctx, now)
		mu.Lock()
		starts = append(starts, now)
		mu.Unlock()
		return nil
	}))
	shop := newShop(db)

	failed := shelves.Burst(ctx, shop, rec, catalog.Bestsellers, *visitors)
	took := time.Since(began)
	q := db.Queries(catalog.Bestsellers)
	fmt.Fprintf(w, "At 09:00 the cached bestseller list has expired, and %d visitors arrive at once.\n", *visitors)
	fmt.Fprintf(w, "The shop has a lock per shelf now. The bestseller query takes %.1f s.\n\n", catalog.QueryCost.Seconds())
	fmt.Fprintf(w, "  visitors at 09:00:     %d\n", *visitors)
	fmt.Fprintf(w, "  bestseller queries:    %d%s\n", q, onceNote(q))
	fmt.Fprintf(w, "  most queries at once:  %d\n", mostAtOnce(starts, catalog.QueryCost))
	fmt.Fprintf(w, "  database time spent:   %.1f s\n", db.Busy().Seconds())
	fmt.Fprintf(w, "  last visitor served:   after %.2f s\n", took.Seconds())
	if failed > 0 {
		fmt.Fprintf(w, "  visitors with errors:  %d\n", failed)
	}
	if q > 1 && mostAtOnce(starts, catalog.QueryCost) == 1 {
		fmt.Fprintf(w, "\nThe queries ran one after another. With no lock at all they would have run side by side,\n")
		fmt.Fprintf(w, "and the last visitor would have been served after about %.1f s.\n", catalog.QueryCost.Seconds())
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

// mostAtOnce returns the largest number of queries that ran at the same
// time, each taking cost from its start.
func mostAtOnce(starts []time.Time, cost time.Duration) int {
	s := slices.SortedFunc(slices.Values(starts), time.Time.Compare)
	most := 0
	for i, t := range s {
		n := 0
		for _, u := range s[i:] {
			if u.Sub(t) >= cost {
				break
			}
			n++
		}
		most = max(most, n)
	}
	return most
}
