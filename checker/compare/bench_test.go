package compare

import (
	"context"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"golang.org/x/sync/singleflight"

	"stampede/checker/harness"
	"stampede/shop/catalog"
	"stampede/shop/clock"
	"stampede/solutions/case01"
	"stampede/solutions/case06"
	"stampede/solutions/case07"
)

// The benchmarks of `make bench`: what each reference solution's hit path
// and burst path cost, beside the two things a Go programmer would write
// without the lab: a map behind a sync.RWMutex, and that map with
// x/sync/singleflight on a miss. docs/design.md records the results.

// readers is how many goroutines read at once: 50, as in the checks.
const readers = 50

// frozen is a clock that never moves and costs nothing to read, so that
// the benchmarks measure the shops, not the clock. (clock.Fake takes a
// lock on every Now.)
type frozen struct{ t time.Time }

func (f frozen) Now() time.Time                                   { return f.t }
func (f frozen) Sleep(ctx context.Context, _ time.Duration) error { return ctx.Err() }

// rwmap is the baseline: a map behind a sync.RWMutex, and singleflight for
// a miss.
type rwmap struct {
	db      *catalog.DB
	mu      sync.RWMutex
	m       map[string][]string
	flights singleflight.Group
}

func (r *rwmap) Top(ctx context.Context, shelf string) ([]string, error) {
	r.mu.RLock()
	books, ok := r.m[shelf]
	r.mu.RUnlock()
	if ok {
		return books, nil
	}
	v, err, _ := r.flights.Do(shelf, func() (any, error) {
		books, err := r.db.Top(ctx, shelf)
		if err == nil {
			r.mu.Lock()
			r.m[shelf] = books
			r.mu.Unlock()
		}
		return books, err
	})
	if err != nil {
		return nil, err
	}
	return v.([]string), nil
}

// shops makes each contender in front of db; the Redis one on mr, with
// clk, and rdb to close.
func shops(b *testing.B, db *catalog.DB, mr *miniredis.Miniredis, clk clock.Clock) map[string]Shop {
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr(), DisableIdentity: true})
	b.Cleanup(func() { _ = rdb.Close() })
	return map[string]Shop{
		"rwmutex+singleflight": &rwmap{db: db, m: map[string][]string{}},
		"case01":               case01.New(db),
		"case06":               case06.New(db, rdb, clk),
		"case07":               case07.New(db, frozen{opening}, rand.Float64, time.Hour, 1),
	}
}

var order = []string{"rwmutex+singleflight", "case01", "case06", "case07"}

// BenchmarkHit: 50 goroutines read a warm key. Every read is a hit.
func BenchmarkHit(b *testing.B) {
	mr := miniredis.RunT(b)
	for _, name := range order {
		b.Run(name, func(b *testing.B) {
			db := catalog.New(catalog.WithCost(0))
			shop := shops(b, db, mr, frozen{opening})[name]
			ctx := context.Background()
			if _, err := shop.Top(ctx, catalog.Bestsellers); err != nil {
				b.Fatal(err)
			}
			before := db.Queries(catalog.Bestsellers)
			procs := runtime.GOMAXPROCS(0)
			b.SetParallelism((readers + procs - 1) / procs)
			defer reportCPU(b)()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := shop.Top(ctx, catalog.Bestsellers); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.StopTimer()
			if db.Queries(catalog.Bestsellers) != before {
				b.Fatalf("%s read the source on a warm key", name)
			}
		})
	}
}

// BenchmarkBurst: 50 goroutines find the key cold at once; one op is the
// whole burst, from a new shop to every reader's answer. The source costs
// nothing, so this is the coordination's own cost.
func BenchmarkBurst(b *testing.B) {
	mr := miniredis.RunT(b)
	for _, name := range order {
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			defer reportCPU(b)()
			for b.Loop() {
				b.StopTimer()
				mr.FlushAll()
				db := catalog.New(catalog.WithCost(0))
				// The real clock: case 6's losers poll Redis every 25 to 75
				// ms, and that wait is part of its burst.
				shop := shops(b, db, mr, clock.Real{})[name]
				start := make(chan struct{})
				var wg sync.WaitGroup
				for range readers {
					wg.Go(func() {
						<-start
						if _, err := shop.Top(ctx, catalog.Bestsellers); err != nil {
							b.Error(err)
						}
					})
				}
				b.StartTimer()
				close(start)
				wg.Wait()
			}
		})
	}
}

// reportCPU adds the CPU time per operation (cpu-ns/op) to a benchmark's
// results, where the system tells it: on a shared machine it moves far
// less than the wall time does. Call the function it returns at the end.
func reportCPU(b *testing.B) func() {
	start, ok := harness.CPUTime()
	return func() {
		end, _ := harness.CPUTime()
		if ok && b.N > 0 {
			b.ReportMetric(float64(end-start)/float64(b.N), "cpu-ns/op")
		}
	}
}
