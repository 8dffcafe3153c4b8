// Package deferunlock is a known-wrong answer to case 5: the shipped code
// with its lock released by defer, which is case 1's solution. Nobody hangs
// any more, but each waiter, finding the cache still empty when its turn
// comes, queries again: while the database is down that is one failing
// query per visitor, in a row. A waiter parked in sync.Mutex.Lock cannot
// hear its context, and the query runs on its starter's context.
//
// Verdict: fails "shared-error", "give-up" and "starter-gives-up".
package deferunlock

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
	b, ok := s.cache[shelf]
	return b, ok
}

func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	if b, ok := s.cached(shelf); ok {
		return b, nil
	}
	s.mu.Lock()
	l := s.locks[shelf]
	if l == nil {
		l = new(sync.Mutex)
		s.locks[shelf] = l
	}
	s.mu.Unlock()

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
