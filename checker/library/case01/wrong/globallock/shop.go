// Package globallock is a known-wrong answer to case 1: one mutex for the
// whole shop, held across the slow query. The stampede is gone, but a
// visitor for new releases waits for the bestseller query.
//
// Verdict: fails "apart".
package globallock

import (
	"context"
	"sync"

	"stampede/shop/catalog"
)

type Shop struct {
	db    *catalog.DB
	mu    sync.Mutex
	cache map[string][]string
}

func New(db *catalog.DB) *Shop { return &Shop{db: db, cache: map[string][]string{}} }

func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if books, ok := s.cache[shelf]; ok {
		return books, nil
	}
	books, err := s.db.Top(ctx, shelf)
	if err != nil {
		return nil, err
	}
	s.cache[shelf] = books
	return books, nil
}
