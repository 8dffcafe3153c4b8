// Package namedresult is a known-wrong answer to case 1: named results
// and a bare return. The miss path sets books; the hit path returns before
// anything is assigned to it, so every hit gets nil. The burst looks
// perfect; the visitors after it get an empty shelf.
//
// Verdict: fails "served", "once" and "two-shelves" (the later visitors
// get nil).
package namedresult

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

func (s *Shop) has(shelf string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	_, ok := s.cache[shelf]
	return ok
}

func (s *Shop) Top(ctx context.Context, shelf string) (books []string, err error) {
	if s.has(shelf) {
		return
	}
	s.mu.Lock()
	l, ok := s.locks[shelf]
	if !ok {
		l = new(sync.Mutex)
		s.locks[shelf] = l
	}
	s.mu.Unlock()

	l.Lock()
	defer l.Unlock()
	s.mu.RLock()
	books, ok = s.cache[shelf]
	s.mu.RUnlock()
	if ok {
		return
	}
	books, err = s.db.Top(ctx, shelf)
	if err != nil {
		return
	}
	s.mu.Lock()
	s.cache[shelf] = books
	s.mu.Unlock()
	return
}
