// Package spinwait is a known-wrong answer to case 1: right in what it
// returns, wrong in how it waits. Waiters spin on the flight's atomic flag,
// yielding with runtime.Gosched, until the query lands: fifty goroutines
// burning the processors for the whole 0.2 s. The checks never see the
// shop at rest, and say so: the visitors are spinning while the query runs.
//
// Verdict: fails "served", "once", "two-shelves" and "apart" (spinning
// waiters).
package spinwait

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"

	"stampede/shop/catalog"
)

type flight struct {
	landed atomic.Bool
	books  []string
	err    error
}

type Shop struct {
	db      *catalog.DB
	mu      sync.Mutex
	cache   map[string][]string
	flights map[string]*flight
}

func New(db *catalog.DB) *Shop {
	return &Shop{db: db, cache: map[string][]string{}, flights: map[string]*flight{}}
}

func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	s.mu.Lock()
	if b, ok := s.cache[shelf]; ok {
		s.mu.Unlock()
		return b, nil
	}
	if f, ok := s.flights[shelf]; ok {
		s.mu.Unlock()
		for !f.landed.Load() {
			runtime.Gosched()
		}
		return f.books, f.err
	}
	f := &flight{}
	s.flights[shelf] = f
	s.mu.Unlock()

	f.books, f.err = s.db.Top(ctx, shelf)
	s.mu.Lock()
	if f.err == nil {
		s.cache[shelf] = f.books
	}
	delete(s.flights, shelf)
	s.mu.Unlock()
	f.landed.Store(true)
	return f.books, f.err
}
