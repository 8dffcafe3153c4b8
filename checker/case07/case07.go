// Package case07 is case 7 of the lab, the key that must never miss: its
// story for `shop run 7` and its checks for `shop check 7`.
//
// Everything here runs on virtual time (see world): minutes of traffic on
// a fake clock, played one event at a time, with a seeded random source, so
// that a run gives the same numbers on any machine and every time.
package case07

import (
	"context"
	"io"
	"time"

	"stampede/checker/check"
	"stampede/checker/harness"
	"stampede/checker/shelves"
	"stampede/shop/catalog"
	"stampede/shop/clock"
)

// checks are the case's checks, each written once, in the order the report
// prints them: what it checks and catches, and the function that decides it.
var checks = []harness.Check[New]{
	{Info: check.Info{ID: "no-wait", Name: "after the first fill, no read waits on a miss",
		Catches: "single-flight alone (every expiry makes the readers of that moment wait), a refresh that starts too late for its own query, and a list served after its time to live"}, Run: NoWait},
	{Info: check.Info{ID: "per-window", Name: "recomputes stay close to one per time-to-live window",
		Catches: "early recomputes that pile up: every reader in a fixed early window recomputing, a rule that fires on every read, a draw of 0 that always fires"}, Run: PerWindow},
	{Info: check.Info{ID: "late", Name: "recomputes start late in the window, not as soon as the value is stored",
		Catches: "a sign error in the rule, which recomputes on the first read after every store, and ln(u) with u able to be 0"}, Run: Late},
	{Info: check.Info{ID: "delta", Name: "delta is measured: a slower recompute starts earlier",
		Catches: "delta hard-coded, measured with the time package instead of the shop's clock, a fixed refresh-ahead window, or one delta for the whole shop instead of one per shelf"}, Run: Delta},
	{Info: check.Info{ID: "beta", Name: "beta is honoured: a larger beta starts earlier",
		Catches: "beta ignored, or divided by instead of multiplied"}, Run: Beta},
	{Info: check.Info{ID: "one-flight", Name: "only one recompute runs at a time for a key",
		Catches: "XFetch without single-flight: two readers who both draw an early recompute both run it"}, Run: OneFlight},
	{Info: starterInfo, Run: StarterLeaves},
	{Info: ExploreInfo, Run: Explore},
	{Info: panicInfo, Run: Panics},
	{Info: check.Info{ID: "race", Name: "no data race", Race: true,
		Catches: "the cache, the flight table or a refreshing flag read or written outside the lock, by the background recompute or by a reader"}, Run: Busy},
}

// Case describes case 7.
var Case = check.Case{
	Number:  7,
	Points:  12, // XFetch: early refresh by probability, on virtual time
	Title:   "The key that must never miss",
	Chapter: "docs/07-xfetch.md",
	Summary: "The bestseller list is read 100 times a second; every 30 s it expires and the readers of that moment wait.",
	Breaks:  "the key that must never miss: XFetch early refresh",
	Lesson:  "a lock bounds a miss but still makes the readers of that moment wait; XFetch recomputes a hot key early, at random, so it never goes missing",
	Checks:  harness.Infos(checks),
	Hints: []string{
		"Run `go run ./shop run 7` and look at when the waits happen: only at the moment the list expires. The cure is for the list never to be missing: refresh it before it expires.",
		"Refreshing at a fixed time before expiry (say 5 s) needs a number that fits every query and every load. XFetch lets each reader decide at random instead: recompute now when now - delta*beta*ln(u) >= expiry. Store delta (how long the query took, measured on clk) and the expiry with the books.",
		"u must be in (0, 1]: random() can return 0, and ln(0) is minus infinity, which always says recompute. 1 - random() is in (0, 1].",
		"The reader whose draw says recompute must not wait for it: start the recompute in a goroutine and return the list it found. A second lucky reader while that recompute runs must not start another: keep the recompute in flight per shelf, under the lock, and check it before starting one.",
		"A reader who finds the list expired (or missing) still needs single-flight: wait for the recompute in flight, or start it. Compare with solutions/case07/shop.go.",
	},
}

// Shop is what a case 7 implementation offers: shelves served from a cache.
type Shop = shelves.Shop

// New makes a case 7 shop: in front of db, telling the time and measuring
// on clk, drawing from random, keeping each value for ttl, with XFetch's
// beta.
type New func(db *catalog.DB, clk clock.Clock, random func() float64, ttl time.Duration, beta float64) Shop

// Bind binds case 7 to an implementation's constructor.
func Bind[S Shop](newShop func(*catalog.DB, clock.Clock, func() float64, time.Duration, float64) S) harness.Bound {
	mk := func(db *catalog.DB, clk clock.Clock, random func() float64, ttl time.Duration, beta float64) Shop {
		return newShop(db, clk, random, ttl, beta)
	}
	return harness.Bound{
		Scenario: func(ctx context.Context, w io.Writer, args []string) error {
			h := harness.New(ctx, harness.PkgOf[S](), harness.DefaultBound)
			return Scenario(h, w, args, mk)
		},
		Checks: harness.Decide(checks, mk),
	}
}
