// Package donechan is a known-right answer to case 4: a per-shelf
// in-flight entry with a done channel. Hits take the read lock only; a
// miss takes the write lock just long enough to find or record the
// shelf's flight.
//
// Verdict: passes every check.
package donechan

import (
	"context"
	"sync"

	"stampede/shop/catalog"
)

type call struct {
	done  chan struct{}
	books []string
	err   error
}

type Shop struct {
	db     *catalog.DB
	mu     sync.RWMutex
	cache  map[string][]string
	flying map[string]*call
}

func New(db *catalog.DB) *Shop {
	return &Shop{db: db, cache: map[string][]string{}, flying: map[string]*call{}}
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
	if c, ok := s.flying[shelf]; ok {
		s.mu.Unlock()
		<-c.done
		return c.books, c.err
	}
	c := &call{done: make(chan struct{})}
	s.flying[shelf] = c
	s.mu.Unlock()

	c.books, c.err = s.db.Top(ctx, shelf)

	s.mu.Lock()
	if c.err == nil {
		s.cache[shelf] = c.books
	}
	delete(s.flying, shelf)
	s.mu.Unlock()
	close(c.done)
	return c.books, c.err
}
