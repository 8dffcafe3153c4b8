package case06

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"golang.org/x/sync/singleflight"

	"stampede/checker/fleet"
	"stampede/checker/harness"
	"stampede/checker/shelves"
	"stampede/shop/catalog"
	"stampede/shop/clock"
)

// The story's fleet, as in the fleet table: 200 misses on each of 6
// instances.
const (
	storyInstances = 6
	storyVisitors  = 200
)

// Scenario plays the story: at 09:00 the bestseller list expires in the
// Redis the fleet shares, and every instance has a burst of visitors. It
// plays the burst three times, each on a fresh Redis: with no protection,
// with the in-process single-flight alone, and on the code under test.
func Scenario(ctx context.Context, w io.Writer, args []string, newShop NewShop, pkg string) error {
	fs := flag.NewFlagSet("run 6", flag.ContinueOnError)
	n := fs.Int("instances", storyInstances, "how many shop instances share the Redis")
	visitors := fs.Int("visitors", storyVisitors, "how many visitors each instance has at 09:00")
	var sf fleet.StoryFlags
	if err := sf.Parse(ctx, fs, args, w); err != nil {
		return err
	}
	if sf.Seed != 0 {
		return explorer(newShop).Replay(harness.New(ctx, pkg, harness.DefaultBound), w, sf.Seed, sf.Timeline)
	}
	if err := harness.Positive("instances", *n); err != nil {
		return err
	}
	if err := harness.Positive("visitors", *visitors); err != nil {
		return err
	}

	// In the two reference regimes every miss comes before the first fill,
	// as in a real burst: the queries wait until every visitor (with no
	// protection) or every instance's flight (in-process only) has missed.
	all, flights := newBarrier(*n**visitors), newBarrier(*n)
	regimes := []struct {
		name string
		make NewShop
		hold catalog.Hook
	}{
		{"no protection", func(db *catalog.DB, rdb *redis.Client, _ clock.Clock) shelves.Shop {
			return &bare{db: db, rdb: rdb, missed: all.arrive}
		}, all.wait},
		{"in-process only", func(db *catalog.DB, rdb *redis.Client, _ clock.Clock) shelves.Shop {
			return &coalescing{bare: bare{db: db, rdb: rdb, missed: flights.arrive}}
		}, flights.wait},
		{"this code", newShop, nil},
	}
	var server string
	results := make([]burst, len(regimes))
	for i, r := range regimes {
		b, where, err := playBurst(ctx, sf.URL, r.make, r.hold, *n, *visitors)
		if err != nil {
			return err
		}
		results[i], server = b, where
	}

	fmt.Fprintf(w, "At 09:00 the bestseller list expires in Redis, the cache the whole fleet shares,\n")
	fmt.Fprintf(w, "and each of %d shop instances has %d visitors at that moment. The query takes %.1f s.\n", *n, *visitors, catalog.QueryCost.Seconds())
	fmt.Fprintf(w, "Redis: %s", server)
	if sf.URL == "" {
		fmt.Fprintf(w, " (--redis redis://HOST:PORT/DB, or %s, for a real server)", fleet.URLVar)
	}
	fmt.Fprint(w, "\n\n")

	row := func(label string, cell func(burst) string) {
		fmt.Fprintf(w, "  %-20s", label)
		for _, b := range results {
			fmt.Fprintf(w, "%18s", cell(b))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "  %-20s", "")
	for _, r := range regimes {
		fmt.Fprintf(w, "%18s", r.name)
	}
	fmt.Fprintln(w)
	row("source reads", func(b burst) string { return fmt.Sprint(b.reads) })
	row("database time", func(b burst) string { return fmt.Sprintf("%.1f s", b.busy.Seconds()) })
	row("Redis commands", func(b burst) string { return fmt.Sprint(b.commands) })
	row("told to try again", func(b burst) string { return fmt.Sprint(b.tryAgain) })
	if results[2].failed > 0 {
		row("other errors", func(b burst) string { return fmt.Sprint(b.failed) })
	}
	row("last visitor served", func(b burst) string { return fmt.Sprintf("after %.2f s", b.took.Seconds()) })

	mine := results[2].reads
	fmt.Fprintln(w)
	switch {
	case mine == 1:
		fmt.Fprintf(w, "One read for the whole fleet: the lock turned %d instances' misses into one rebuild.\n", *n)
	case mine == *n:
		fmt.Fprintf(w, "%d reads, one per instance: each instance coalesces its own visitors, and the fleet needed one.\n", mine)
	default:
		fmt.Fprintf(w, "%d reads, where the fleet needed one.\n", mine)
	}
	if results[2].firstErr != nil {
		fmt.Fprintf(w, "A visitor's error: %v\n", results[2].firstErr)
	}
	return nil
}

// burst is what one regime did.
type burst struct {
	reads, commands, tryAgain, failed int
	busy, took                        time.Duration
	firstErr                          error
}

// playBurst plays one burst in a fresh world and counts.
func playBurst(ctx context.Context, url string, newShop NewShop, hold catalog.Hook, n, visitors int) (burst, string, error) {
	w, err := fleet.Open(ctx, url)
	if err != nil {
		return burst{}, "", err
	}
	defer w.Close()
	db := catalog.New()
	if hold != nil {
		db = catalog.New(catalog.WithHook(hold))
	}
	var taps []*fleet.Tap
	var shops []shelves.Shop
	for range n {
		t := fleet.NewTap(nil)
		taps = append(taps, t)
		shops = append(shops, newShop(db, w.Client(t), clock.Real{}))
	}

	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make([]error, n*visitors)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			_, errs[i] = shops[i%n].Top(ctx, catalog.Bestsellers)
		}()
	}
	began := time.Now()
	close(start)
	wg.Wait()

	b := burst{took: time.Since(began), reads: db.Queries(catalog.Bestsellers), busy: db.Busy()}
	for _, t := range taps {
		for _, c := range t.Log() {
			if len(c.Keys) > 0 { // not the handshake of a new connection
				b.commands++
			}
		}
	}
	for _, err := range errs {
		var later interface{ RetryAfter() time.Duration }
		switch {
		case err == nil:
		case errors.As(err, &later):
			b.tryAgain++
		default:
			b.failed++
			if b.firstErr == nil {
				b.firstErr = err
			}
		}
	}
	return b, w.Describe(ctx), nil
}

// bare is a shop with no protection: every visitor who misses in Redis
// reads the source and fills Redis itself.
type bare struct {
	db     *catalog.DB
	rdb    *redis.Client
	missed func() // called on each miss, when set
}

const bareKey = "shelf:"

func (s *bare) Top(ctx context.Context, shelf string) ([]string, error) {
	data, err := s.rdb.Get(ctx, bareKey+shelf).Bytes()
	if err == nil {
		var books []string
		if err := json.Unmarshal(data, &books); err == nil {
			return books, nil
		}
	}
	if s.missed != nil {
		s.missed()
	}
	books, err := s.db.Top(ctx, shelf)
	if err != nil {
		return nil, err
	}
	if data, err := json.Marshal(books); err == nil {
		_ = s.rdb.Set(ctx, bareKey+shelf, data, 30*time.Second).Err()
	}
	return books, nil
}

// coalescing is the in-process single-flight of cases 1 to 5 in front of
// bare: one flight per shelf per instance.
type coalescing struct {
	bare
	flights singleflight.Group
}

func (s *coalescing) Top(ctx context.Context, shelf string) ([]string, error) {
	v, err, _ := s.flights.Do(shelf, func() (any, error) { return s.bare.Top(ctx, shelf) })
	if err != nil {
		return nil, err
	}
	return v.([]string), nil
}

// barrier opens once n goroutines have arrived.
type barrier struct {
	mu   sync.Mutex
	left int
	open chan struct{}
}

func newBarrier(n int) *barrier { return &barrier{left: n, open: make(chan struct{})} }

func (b *barrier) arrive() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.left--; b.left == 0 {
		close(b.open)
	}
}

// wait is a catalog hook that holds a query until the barrier opens.
func (b *barrier) wait(ctx context.Context, _ string) error {
	select {
	case <-b.open:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
