// Package nodeferpanic is a known-wrong answer to case 5: a flight table
// that handles errors and cancellation, but lands the flight with plain
// statements after the query instead of in a deferred function. When the
// query panics, they never run: the flight stays in the air, and everyone
// waiting for it waits until their context ends, which may be never.
//
// Verdict: fails "panic", and "goexit": the flight never lands either way.
package nodeferpanic

import (
	"context"
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
	mu      sync.RWMutex
	cache   map[string][]string
	flights map[string]*flight
}

func New(db *catalog.DB) *Shop {
	return &Shop{db: db, cache: map[string][]string{}, flights: map[string]*flight{}}
}

func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	s.mu.RLock()
	b, ok := s.cache[shelf]
	s.mu.RUnlock()
	if ok {
		return b, nil
	}
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

	f.books, f.err = s.db.Top(context.WithoutCancel(ctx), shelf)
	s.mu.Lock()
	if f.err == nil {
		s.cache[shelf] = f.books
	}
	delete(s.flights, shelf)
	s.mu.Unlock()
	close(f.done)
	return f.books, f.err
}
