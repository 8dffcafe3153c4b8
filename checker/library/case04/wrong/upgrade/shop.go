// Package upgrade is a known-wrong answer to case 4: it takes the read
// lock to look, and on a miss asks for the write lock while still holding
// the read lock, as if a read lock could be upgraded. A sync.RWMutex cannot
// be: Lock waits for every reader to leave, the visitor itself among them,
// so the first miss waits forever.
//
// Verdict: fails every check; each needs a miss to fill the cache first.
package upgrade

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
	if b, ok := s.cache[shelf]; ok {
		s.mu.RUnlock()
		return b, nil
	}
	s.mu.Lock() // still holding the read lock: waits for itself
	defer s.mu.Unlock()
	defer s.mu.RUnlock()
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
