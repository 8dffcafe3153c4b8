// Package unguardedlocks is a known-wrong answer to case 2: the cache has
// its guard, and each shelf its own lock with two looks, but the table of
// locks has no guard at all. Visitors read and write that map at once: a
// data race, two locks for one shelf when two visitors miss together, and
// at worst a fatal "concurrent map writes".
//
// Verdict: fails "race". Whether a run also makes two locks for a shelf,
// or crashes, depends on the schedule, so the other checks may fail too.
package unguardedlocks

import (
	"context"
	"sync"

	"stampede/shop/catalog"
)

type Shop struct {
	db    *catalog.DB
	mu    sync.Mutex // guards cache only
	cache map[string][]string
	locks map[string]*sync.Mutex
}

func New(db *catalog.DB) *Shop {
	return &Shop{db: db, cache: map[string][]string{}, locks: map[string]*sync.Mutex{}}
}

func (s *Shop) cached(shelf string) ([]string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.cache[shelf]
	return b, ok
}

func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	if b, ok := s.cached(shelf); ok {
		return b, nil
	}
	l, ok := s.locks[shelf]
	if !ok {
		l = new(sync.Mutex)
		s.locks[shelf] = l
	}
	l.Lock()
	defer l.Unlock()
	if b, ok := s.cached(shelf); ok {
		return b, nil
	}
	b, err := s.db.Top(ctx, shelf)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.cache[shelf] = b
	s.mu.Unlock()
	return b, nil
}
