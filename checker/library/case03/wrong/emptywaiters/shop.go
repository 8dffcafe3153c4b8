// Package emptywaiters is a known-wrong answer to case 3: it sees that the
// waiters must not query, and makes them return as soon as they get the
// lock, with whatever their first look found: nothing.
//
// Verdict: fails "served".
package emptywaiters

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
	b, ok := s.cache[shelf]
	l := s.locks[shelf]
	waited := l != nil
	if !waited {
		l = new(sync.Mutex)
		s.locks[shelf] = l
	}
	s.mu.Unlock()
	if ok {
		return b, nil
	}
	l.Lock()
	defer l.Unlock()
	if waited {
		return b, nil // someone else queried; but b is still what the first look saw
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
