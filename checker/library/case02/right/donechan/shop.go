// Package donechan is a known-right answer: a per-shelf in-flight entry
// with a done channel. The first visitor to miss records the entry and
// queries; the others find the entry and wait for its channel to close,
// then read the answer the entry carries. The cache is filled and the entry
// removed in one critical section, so a visitor sees one or the other.
//
// Verdict: passes every check.
package donechan

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
	if b, ok := s.cache[shelf]; ok { // filled while we changed locks
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
