// Package unguardedlocks is a known-wrong answer to case 1: a lock per
// shelf and two looks, but the table of locks has no guard of its own. Two
// visitors can make two locks for one shelf, and the map of locks is
// written by many goroutines at once.
//
// Verdict: fails "race". Whether two visitors make two locks for the same
// shelf, or the map crashes, depends on the schedule, so "once" and
// "two-shelves" may fail too.
package unguardedlocks

import (
	"context"
	"sync"

	"stampede/shop/catalog"
)

type Shop struct {
	db    *catalog.DB
	mu    sync.RWMutex
	cache map[string][]string
	locks map[string]*sync.Mutex
}

func New(db *catalog.DB) *Shop {
	return &Shop{db: db, cache: map[string][]string{}, locks: map[string]*sync.Mutex{}}
}

func (s *Shop) cached(shelf string) ([]string, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	books, ok := s.cache[shelf]
	return books, ok
}

func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	if books, ok := s.cached(shelf); ok {
		return books, nil
	}
	l, ok := s.locks[shelf] // no guard: the table is shared state too
	if !ok {
		l = new(sync.Mutex)
		s.locks[shelf] = l
	}
	l.Lock()
	defer l.Unlock()
	if books, ok := s.cached(shelf); ok {
		return books, nil
	}
	books, err := s.db.Top(ctx, shelf)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.cache[shelf] = books
	s.mu.Unlock()
	return books, nil
}
