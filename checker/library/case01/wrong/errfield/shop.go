// Package errfield is a known-wrong answer to case 1: the shop keeps the
// last error "for the status page", written on the error path with no
// lock. The happy path is fine; two queries failing at once write the
// field together.
//
// Verdict: fails "race" (only when queries fail).
package errfield

import (
	"context"
	"sync"

	"stampede/shop/catalog"
)

type Shop struct {
	db      *catalog.DB
	mu      sync.RWMutex
	cache   map[string][]string
	locks   map[string]*sync.Mutex
	lastErr error
	fails   int
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
	l, ok := s.locks[shelf]
	if !ok {
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
		s.lastErr = err
		s.fails++
		return nil, err
	}
	s.mu.Lock()
	s.cache[shelf] = b
	s.mu.Unlock()
	return b, nil
}
