// Package writelockquery is a known-wrong answer to case 4: hits share a
// read lock, and a miss takes the write lock, looks again and queries while
// holding it. That is single-flight and race-free, but while one shelf's
// slow query runs, every hit on every other shelf waits for it.
//
// Verdict: fails "hit-apart".
package writelockquery

import (
	"context"
	"sync"

	"stampede/shop/catalog"
)

type Shop struct {
	db    *catalog.DB
	mu    sync.RWMutex
	cache map[string][]string
}

func New(db *catalog.DB) *Shop { return &Shop{db: db, cache: map[string][]string{}} }

func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	s.mu.RLock()
	b, ok := s.cache[shelf]
	s.mu.RUnlock()
	if ok {
		return b, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if b, ok := s.cache[shelf]; ok {
		return b, nil
	}
	b, err := s.db.Top(ctx, shelf)
	if err != nil {
		return nil, err
	}
	s.cache[shelf] = b
	return b, nil
}
