// Package fetchlockhits is a known-wrong answer to case 4: the unguarded
// first look is dropped instead of guarded, so every visitor, hit or miss,
// takes the shelf's fetch lock and looks under it. The map reads are safe
// (under a read lock), but the hits of a shelf queue on its mutex.
//
// Verdict: fails "hits-shared".
package fetchlockhits

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

func (s *Shop) lockFor(shelf string) *sync.Mutex {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.locks[shelf]
	if l == nil {
		l = new(sync.Mutex)
		s.locks[shelf] = l
	}
	return l
}

func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	l := s.lockFor(shelf)
	l.Lock()
	defer l.Unlock()
	s.mu.RLock()
	b, ok := s.cache[shelf]
	s.mu.RUnlock()
	if ok {
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
