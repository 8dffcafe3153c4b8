// Package perkey is a known-right answer to case 4, written differently
// from the reference: the cache has an RWMutex of its own, the table of
// per-shelf locks a plain mutex of its own, and both looks take the
// cache's read lock.
//
// Verdict: passes every check.
package perkey

import (
	"context"
	"sync"

	"stampede/shop/catalog"
)

type Shop struct {
	db *catalog.DB

	cacheMu sync.RWMutex
	cache   map[string][]string

	locksMu sync.Mutex
	locks   map[string]*sync.Mutex
}

func New(db *catalog.DB) *Shop {
	return &Shop{db: db, cache: map[string][]string{}, locks: map[string]*sync.Mutex{}}
}

func (s *Shop) look(shelf string) ([]string, bool) {
	s.cacheMu.RLock()
	defer s.cacheMu.RUnlock()
	b, ok := s.cache[shelf]
	return b, ok
}

func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	if b, ok := s.look(shelf); ok {
		return b, nil
	}
	s.locksMu.Lock()
	l, ok := s.locks[shelf]
	if !ok {
		l = new(sync.Mutex)
		s.locks[shelf] = l
	}
	s.locksMu.Unlock()

	l.Lock()
	defer l.Unlock()
	if b, ok := s.look(shelf); ok {
		return b, nil
	}
	b, err := s.db.Top(ctx, shelf)
	if err != nil {
		return nil, err
	}
	s.cacheMu.Lock()
	s.cache[shelf] = b
	s.cacheMu.Unlock()
	return b, nil
}
