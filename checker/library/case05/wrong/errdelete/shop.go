// Package errdelete is a known-wrong answer to case 5: the flight is
// removed from the table in two places. On success, under the lock, with
// the cache's fill; on failure, "there is nothing to store", so the
// student deletes it right away, without the lock. Two shelves failing at
// once, or a failure while another visitor looks at the table, is a data
// race on the flights map.
//
// Verdict: fails "race" (only while queries fail). Many failures at once
// may also crash it with concurrent map writes.
package errdelete

import (
	"context"
	"fmt"
	"sync"

	"stampede/shop/catalog"
)

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
	defer close(f.done)
	defer func() {
		if r := recover(); r != nil {
			f.books, f.err = nil, fmt.Errorf("panic: %v", r)
		}
		if f.err != nil {
			delete(s.flights, shelf)
			return
		}
		s.mu.Lock()
		s.cache[shelf] = f.books
		delete(s.flights, shelf)
		s.mu.Unlock()
	}()
	f.books, f.err = s.db.Top(ctx, shelf)
}
