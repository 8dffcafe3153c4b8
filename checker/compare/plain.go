package compare

import (
	"context"
	"sync"
	"time"

	"stampede/shop/catalog"
	"stampede/shop/clock"
)

// plain is cache-aside with no protection at all, the table's first row:
// a reader who finds no fresh value queries the source and stores what it
// got. It is compare's own code, not a case: every case of the lab starts
// from some protection or other, and this row is the baseline they beat.
type plain struct {
	db  *catalog.DB
	clk clock.Clock
	ttl time.Duration

	mu    sync.Mutex
	cache map[string]stored
}

type stored struct {
	books []string
	until time.Time
}

// Top serves a fresh value, or reads the source. Every reader who misses
// reads it: that is the stampede.
func (p *plain) Top(ctx context.Context, shelf string) ([]string, error) {
	p.mu.Lock()
	v, ok := p.cache[shelf]
	p.mu.Unlock()
	if ok && p.clk.Now().Before(v.until) {
		return v.books, nil
	}
	books, err := p.db.Top(ctx, shelf)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	p.cache[shelf] = stored{books: books, until: p.clk.Now().Add(p.ttl)}
	p.mu.Unlock()
	return books, nil
}

// Plain is the row of no protection: plain cache-aside in each server's
// memory, with the workload's time to live.
func Plain() Row {
	return Row{
		Technique: "no protection",
		Code:      "checker/compare/plain.go",
		Open: func(env *Env, _ int) Shop {
			return &plain{db: env.DB, clk: env.Clock, ttl: env.TTL, cache: map[string]stored{}}
		},
		Seed: Seed{
			Reads: func(w Workload) int { return int(int64(w.Rate) * int64(w.Rebuild) / int64(time.Second)) },
			Says:  "every read in the rebuild's window misses",
		},
	}
}
