// Package waittimeout is a known-wrong answer to case 1: waiters that do
// not trust the flight forever. A waiter gives the first visitor's query
// 100 ms, and then, "in case it is stuck", queries the database itself.
// The story's query takes 0.2 s, so every waiter queries: the stampede,
// 100 ms late.
//
// Verdict: fails "once" (the waiters' own queries).
package waittimeout

import (
	"context"
	"sync"
	"time"

	"stampede/shop/catalog"
)

const patience = 100 * time.Millisecond

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
		case <-time.After(patience):
			// taking too long, fetch it ourselves
			return s.db.Top(ctx, shelf)
		}
	}
	f := &flight{done: make(chan struct{})}
	s.flights[shelf] = f
	s.mu.Unlock()

	f.books, f.err = s.db.Top(ctx, shelf)
	s.mu.Lock()
	if f.err == nil {
		s.cache[shelf] = f.books
	}
	delete(s.flights, shelf)
	s.mu.Unlock()
	close(f.done)
	return f.books, f.err
}
