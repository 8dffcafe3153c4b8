// Package cond is a known-right answer to case 3: a sync.Cond instead of a
// lock per shelf. The shop's mutex guards the cache and the set of shelves
// being fetched; a visitor who finds its shelf being fetched waits on the
// Cond, and looks again when woken. The fetcher broadcasts when it lands.
//
// Verdict: passes every check.
package cond

import (
	"context"
	"sync"

	"stampede/shop/catalog"
)

type Shop struct {
	db       *catalog.DB
	mu       sync.Mutex
	landed   *sync.Cond
	cache    map[string][]string
	fetching map[string]bool
}

func New(db *catalog.DB) *Shop {
	s := &Shop{db: db, cache: map[string][]string{}, fetching: map[string]bool{}}
	s.landed = sync.NewCond(&s.mu)
	return s
}

func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	s.mu.Lock()
	for s.fetching[shelf] {
		s.landed.Wait()
	}
	if b, ok := s.cache[shelf]; ok {
		s.mu.Unlock()
		return b, nil
	}
	s.fetching[shelf] = true
	s.mu.Unlock()

	b, err := s.db.Top(ctx, shelf)

	s.mu.Lock()
	if err == nil {
		s.cache[shelf] = b
	}
	delete(s.fetching, shelf)
	s.mu.Unlock()
	s.landed.Broadcast()
	return b, err
}
