// Package secondlookunguarded is a known-wrong answer to case 4: the first
// look and the write take the cache's lock, but the second look does not,
// on the reasoning that the shelf's lock is held. The shelf's lock keeps
// out this shelf's fetchers only; a fill of another shelf writes the same
// map at the same time.
//
// Verdict: fails "race".
package secondlookunguarded

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
	if b, ok := s.cache[shelf]; ok { // no cache lock: "we hold the shelf's lock"
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
