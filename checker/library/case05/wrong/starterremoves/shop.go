// Package starterremoves is a known-wrong answer to case 5: the query
// runs on its own goroutine, detached from the starter's context, and
// every visitor, the starter too, waits in a select with its context. But
// a visitor who gives up "cleans up after itself" and removes the flight
// from the table. When the starter leaves, the query goes on for those who
// joined, yet the next visitor finds no flight and starts a second query.
//
// Verdict: fails "starter-gives-up".
package starterremoves

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
	f, ok := s.flights[shelf]
	if !ok {
		f = &flight{done: make(chan struct{})}
		s.flights[shelf] = f
		go s.fetch(shelf, f)
	}
	s.mu.Unlock()

	select {
	case <-f.done:
		return f.books, f.err
	case <-ctx.Done():
		s.mu.Lock()
		if s.flights[shelf] == f {
			delete(s.flights, shelf)
		}
		s.mu.Unlock()
		return nil, ctx.Err()
	}
}

func (s *Shop) fetch(shelf string, f *flight) {
	defer close(f.done)
	defer func() {
		if r := recover(); r != nil {
			f.books, f.err = nil, fmt.Errorf("fetching %s: %v", shelf, r)
		}
		s.mu.Lock()
		if f.err == nil {
			s.cache[shelf] = f.books
		}
		if s.flights[shelf] == f {
			delete(s.flights, shelf)
		}
		s.mu.Unlock()
	}()
	f.books, f.err = s.db.Top(context.Background(), shelf)
}
