package case09

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"stampede/checker/case06"
	"stampede/checker/fleet"
	"stampede/checker/harness"
	"stampede/checker/shelves"
	"stampede/shop/catalog"
	"stampede/shop/clock"
)

// The story's traffic: a few instances, a wave of readers on each every
// second, for three expiries and a bit, then a delete.
const (
	storyInstances = 4
	storyVisitors  = 8
	storyEvery     = time.Second
	storyLength    = 95 * time.Second
	storyAfter     = 2 // waves after the delete
)

// reading is one reader of the story, on the shops' clock.
type reading struct {
	start, end time.Time
	got        bool // served the list
	afterDel   bool // came after the write path's delete
}

// Scenario plays the story on virtual time: the bestseller list read on
// every instance once a second through three expiries, then deleted by
// the write path. It counts, per rebuild, the readers who waited for it,
// and how old the oldest list served was.
func Scenario(h *harness.H, w io.Writer, args []string, newShop NewShop) error {
	fs := flag.NewFlagSet("run 9", flag.ContinueOnError)
	n := fs.Int("instances", storyInstances, "how many shop instances share the Redis")
	visitors := fs.Int("visitors", storyVisitors, "how many readers each instance has every second")
	var sf fleet.StoryFlags
	if err := sf.Parse(h.Context(), fs, args, w); err != nil {
		return err
	}
	if sf.Seed != 0 {
		return explorer(newShop).Replay(h, w, sf.Seed, sf.Timeline)
	}
	if err := harness.Positive("instances", *n); err != nil {
		return err
	}
	if err := harness.Positive("visitors", *visitors); err != nil {
		return err
	}
	if sf.URL != "" {
		w, err := fleet.Open(h.Context(), sf.URL)
		if err != nil {
			return &harness.FlagError{Err: err}
		}
		w.Close()
	}

	var mu sync.Mutex
	var reads []time.Time // when each source read started
	var readings []reading
	var shops []Shop
	var clk clock.Clock
	hook := func(context.Context, string) error {
		mu.Lock()
		defer mu.Unlock()
		reads = append(reads, clk.Now())
		return nil
	}
	mk := func(db *catalog.DB, rdb *redis.Client, c clock.Clock) shelves.Shop {
		s := newShop(db, rdb, c)
		shops = append(shops, s)
		return s
	}
	f, err := case06.NewFleet(h, sf.URL, mk, *n, catalog.QueryCost, hook)
	if err != nil {
		return err
	}
	defer f.Close()
	clk = f.Clock
	deleted := false
	wave := func() {
		after := deleted
		f.VisitWith(*n**visitors, func(ctx context.Context, i int) ([]string, error) {
			ctx, leave := context.WithCancel(ctx)
			defer leave()
			r := reading{start: clk.Now(), afterDel: after}
			books, err := shops[i%*n].Top(ctx, catalog.Bestsellers)
			r.end, r.got = clk.Now(), err == nil
			mu.Lock()
			readings = append(readings, r)
			mu.Unlock()
			return books, err
		})
	}
	for t := time.Duration(0); t < storyLength; t += storyEvery {
		wave()
		if err := f.Elapse(storyEvery); err != nil {
			return err
		}
	}
	deletedAt := clk.Now()
	if err := shops[0].Invalidate(h.Context(), catalog.Bestsellers); err != nil {
		return fmt.Errorf("the write path's delete: %w", err)
	}
	deleted = true
	for range storyAfter {
		wave()
		if err := f.Elapse(storyEvery); err != nil {
			return err
		}
	}
	if err := f.Drive(func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(readings) == (int(storyLength/storyEvery)+storyAfter)**n**visitors
	}, case06.Patience); err != nil {
		return fmt.Errorf("the readers did not all finish: %w", err)
	}

	mu.Lock()
	defer mu.Unlock()
	fmt.Fprintf(w, "The bestseller list is read on %d shop instances, by %d readers each every %.1f s,\n", *n, *visitors, storyEvery.Seconds())
	fmt.Fprintf(w, "for %.0f s from 09:00. A rebuild takes %.1f s. Redis: %s", storyLength.Seconds(), catalog.QueryCost.Seconds(), f.World.Describe(h.Context()))
	if sf.URL == "" {
		fmt.Fprintf(w, " (--redis redis://HOST:PORT/DB, or %s, for a real server)", fleet.URLVar)
	}
	fmt.Fprint(w, "\n\n")

	// Each reader who waited is put with the last rebuild that started at
	// or before its arrival, or the first one.
	waited := make([]int, len(reads))
	longestAt := make([]time.Duration, len(reads))
	var longest time.Duration
	total := 0
	var oldest time.Duration
	servedDeleted, waitedAfter := 0, 0
	for _, r := range readings {
		if r.got {
			// The list it got landed with the last read that ended by then.
			for i := len(reads) - 1; i >= 0; i-- {
				if landed := reads[i].Add(catalog.QueryCost); !landed.After(r.end) {
					oldest = max(oldest, r.end.Sub(landed))
					if r.afterDel && landed.Before(deletedAt) {
						servedDeleted++
					}
					break
				}
			}
		}
		if !r.end.After(r.start) {
			continue
		}
		if r.afterDel {
			waitedAfter++
			continue
		}
		total++
		longest = max(longest, r.end.Sub(r.start))
		k := 0
		for i, at := range reads {
			if !at.After(r.start) {
				k = i
			}
		}
		if len(reads) > 0 {
			waited[k]++
			longestAt[k] = max(longestAt[k], r.end.Sub(r.start))
		}
	}
	fmt.Fprintf(w, "  %-16s %20s\n", "rebuild started", "readers who waited")
	for i, at := range reads {
		if !at.Before(deletedAt) {
			break
		}
		fmt.Fprintf(w, "  %-16s %20d\n", at.Format("15:04:05.0"), waited[i])
	}
	// How long they waited, rebuild by rebuild (it moves a little from run
	// to run with the losers' jittered polls, so it has a line of its own).
	var each []string
	for i, at := range reads {
		if at.Before(deletedAt) {
			each = append(each, fmt.Sprintf("%.2f s", longestAt[i].Seconds()))
		}
	}
	fmt.Fprintf(w, "  the longest wait at each: %s\n", strings.Join(each, ", "))
	fmt.Fprintln(w)
	fmt.Fprintf(w, "  readers:         %6d\n", len(readings)-storyAfter**n**visitors)
	fmt.Fprintf(w, "  who waited:      %6d (the longest for %.2f s)\n", total, longest.Seconds())
	fmt.Fprintf(w, "  oldest list served: %.1f s after its rebuild landed\n", oldest.Seconds())
	fmt.Fprintln(w)
	fmt.Fprintf(w, "At %s the write path deletes the list, after a change to the shelf:\n", deletedAt.Format("15:04:05.0"))
	fmt.Fprintf(w, "  readers after the delete who waited for the rebuild: %d\n", waitedAfter)
	fmt.Fprintf(w, "  readers after the delete served the deleted list:    %d\n", servedDeleted)
	fmt.Fprintln(w)
	rebuilds := 0
	for _, at := range reads {
		if at.Before(deletedAt) {
			rebuilds++
		}
	}
	first := 0
	if len(reads) > 0 {
		first = waited[0]
	}
	switch {
	case total > first:
		fmt.Fprintf(w, "At every expiry the readers of that moment waited for the one rebuild: %d of them after the first fill.\n", total-first)
	default:
		fmt.Fprintf(w, "After the first fill nobody waited: %d rebuilds ran behind a stale list, %s after its rebuild at most.\n",
			rebuilds-1, fmt.Sprintf("%.1f s", oldest.Seconds()))
	}
	return nil
}
