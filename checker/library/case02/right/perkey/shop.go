// Package perkey is a known-right answer: a hand-written lock per shelf
// with two looks at the cache, both under a read lock, so that hits never
// wait for each other. The table of locks shares the cache's RWMutex: a
// visitor looks for its shelf's lock under the read lock and, only when it
// is missing, takes the write lock and looks once more before making it.
//
// Verdict: passes every check.
package perkey

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

func (s *Shop) look(shelf string) ([]string, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	b, ok := s.cache[shelf]
	return b, ok
}

func (s *Shop) lock(shelf string) *sync.Mutex {
	s.mu.RLock()
	l := s.locks[shelf]
	s.mu.RUnlock()
	if l != nil {
		return l
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if l = s.locks[shelf]; l == nil { // someone may have made it since the read lock
		l = &sync.Mutex{}
		s.locks[shelf] = l
	}
	return l
}

func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	if b, ok := s.look(shelf); ok {
		return b, nil
	}
	l := s.lock(shelf)
	l.Lock()
	defer l.Unlock()
	if b, ok := s.look(shelf); ok {
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
