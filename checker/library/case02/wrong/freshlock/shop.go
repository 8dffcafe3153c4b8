// Package freshlock is a known-wrong answer to case 2: a lock per shelf
// from a guarded table, but the table hands out a new lock on every call,
// replacing the one already there. No two visitors share a lock, so every
// one of them queries.
//
// Verdict: fails "same-lock" and "two-shelves".
package freshlock

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

func (s *Shop) lockFor(shelf string) *sync.Mutex {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.locks[shelf] = new(sync.Mutex) // meant "if there is none yet"
	return s.locks[shelf]
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
	l := s.lockFor(shelf)
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
