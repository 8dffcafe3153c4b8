// Package forever is a known-wrong answer to case 7: single-flight and no
// expiry at all. The list is computed once and served for ever, so no
// reader waits, and none ever sees a change to the bestsellers either.
//
// Verdict: fails "no-wait", "per-window", "late", "delta" and "beta".
package forever

import (
	"context"
	"sync"
	"time"

	"stampede/shop/catalog"
	"stampede/shop/clock"
)

// Shop serves shelves from a cache that never lets go.
type Shop struct {
	db *catalog.DB

	mu    sync.RWMutex
	cache map[string][]string
	locks map[string]*sync.Mutex
}

// New returns a shop with an empty cache in front of db.
func New(db *catalog.DB, _ clock.Clock, _ func() float64, _ time.Duration, _ float64) *Shop {
	return &Shop{db: db, cache: map[string][]string{}, locks: map[string]*sync.Mutex{}}
}

// Top returns a shelf's books.
func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	if books, ok := s.cached(shelf); ok {
		return books, nil
	}
	s.mu.Lock()
	lock, ok := s.locks[shelf]
	if !ok {
		lock = new(sync.Mutex)
		s.locks[shelf] = lock
	}
	s.mu.Unlock()
	lock.Lock()
	defer lock.Unlock()
	if books, ok := s.cached(shelf); ok {
		return books, nil
	}
	books, err := s.db.Top(ctx, shelf)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.cache[shelf] = books
	s.mu.Unlock()
	return books, nil
}

func (s *Shop) cached(shelf string) ([]string, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	books, ok := s.cache[shelf]
	return books, ok
}
