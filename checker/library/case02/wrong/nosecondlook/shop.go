// Package nosecondlook is a known-wrong answer to case 2: a lock per shelf
// from a table guarded as it should be, but once a waiter has the lock it
// queries without looking in the cache again. Each shelf is queried once
// per visitor, one query after another.
//
// Verdict: fails "two-shelves".
package nosecondlook

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

func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	s.mu.RLock()
	b, ok := s.cache[shelf]
	s.mu.RUnlock()
	if ok {
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
	b, err := s.db.Top(ctx, shelf)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.cache[shelf] = b
	s.mu.Unlock()
	return b, nil
}
