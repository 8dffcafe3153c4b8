// Package retryinflight is a known-wrong answer to case 5: the flight
// retries a failed query twice, with no pause, before it gives up. The
// waiters share the flight, so it looks like single-flight; but a burst
// against a database that is down costs three failing queries, and a
// database that is overloaded gets three times the load.
//
// Verdict: fails "shared-error" (three queries for one burst).
package retryinflight

import (
	"context"
	"fmt"
	"sync"

	"stampede/shop/catalog"
)

const attempts = 3

type flight struct {
	done  chan struct{}
	books []string
	err   error
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
		select {
		case <-f.done:
			return f.books, f.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	f := &flight{done: make(chan struct{})}
	s.flights[shelf] = f
	s.mu.Unlock()
	s.fly(context.WithoutCancel(ctx), shelf, f)
	return f.books, f.err
}

// fly runs the query and lands the flight.
func (s *Shop) fly(ctx context.Context, shelf string, f *flight) {
	defer func() {
		if r := recover(); r != nil {
			f.books, f.err = nil, fmt.Errorf("panic: %v", r)
		}
		s.mu.Lock()
		if f.err == nil {
			s.cache[shelf] = f.books
		}
		delete(s.flights, shelf)
		s.mu.Unlock()
		close(f.done)
	}()
	for i := 0; i < attempts; i++ {
		f.books, f.err = s.db.Top(ctx, shelf)
		if f.err == nil {
			break
		}
	}
}
