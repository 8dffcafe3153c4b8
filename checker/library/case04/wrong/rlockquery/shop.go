// Package rlockquery is a known-wrong answer to case 4: the read lock is
// held for the whole call, query included, since "readers do not block
// each other", and singleflight keeps the burst to one query. The fill
// takes the write lock after the read lock is let go. But the next fill of
// any shelf is a writer waiting for every read lock held across a query,
// and an RWMutex lets no new reader in while a writer waits: each hit then
// waits for the slowest query in the shop.
//
// Verdict: fails "hit-apart" (a waiting writer, then the hits behind it).
package rlockquery

import (
	"context"
	"sync"

	"golang.org/x/sync/singleflight"

	"stampede/shop/catalog"
)

type Shop struct {
	db    *catalog.DB
	mu    sync.RWMutex
	cache map[string][]string
	group singleflight.Group
}

func New(db *catalog.DB) *Shop { return &Shop{db: db, cache: map[string][]string{}} }

func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	s.mu.RLock()
	if b, ok := s.cache[shelf]; ok {
		s.mu.RUnlock()
		return b, nil
	}
	v, err, _ := s.group.Do(shelf, func() (any, error) {
		return s.db.Top(ctx, shelf)
	})
	s.mu.RUnlock()
	if err != nil {
		return nil, err
	}
	b := v.([]string)
	s.mu.Lock()
	s.cache[shelf] = b
	s.mu.Unlock()
	return b, nil
}
