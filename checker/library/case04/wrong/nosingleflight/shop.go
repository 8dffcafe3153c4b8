// Package nosingleflight is a known-wrong answer to case 4: the race fixed
// by starting over with a cache behind an RWMutex, and the per-shelf locks
// thrown out with the rest. Hits share the read lock and nothing races,
// but the stampede of case 1 is back.
//
// Verdict: fails "once".
package nosingleflight

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
	b, err := s.db.Top(ctx, shelf)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.cache[shelf] = b
	s.mu.Unlock()
	return b, nil
}
