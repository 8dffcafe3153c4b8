// Package nosecondlook is a known-wrong answer to case 1: one lock per
// shelf, guarded properly, but no second look at the cache once the lock is
// held. The waiters query one after another: 50 queries in a row.
//
// Verdict: fails "once" and "two-shelves".
package nosecondlook

import (
	"context"
	"sync"

	"stampede/shop/catalog"
)

type Shop struct {
	db    *catalog.DB
	mu    sync.Mutex
	cache map[string][]string
	locks map[string]*sync.Mutex
}

func New(db *catalog.DB) *Shop {
	return &Shop{db: db, cache: map[string][]string{}, locks: map[string]*sync.Mutex{}}
}

func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	s.mu.Lock()
	books, ok := s.cache[shelf]
	l := s.locks[shelf]
	if l == nil {
		l = new(sync.Mutex)
		s.locks[shelf] = l
	}
	s.mu.Unlock()
	if ok {
		return books, nil
	}
	l.Lock()
	defer l.Unlock()
	books, err := s.db.Top(ctx, shelf)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.cache[shelf] = books
	s.mu.Unlock()
	return books, nil
}
