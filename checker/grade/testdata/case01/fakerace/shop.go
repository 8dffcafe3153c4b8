// Package fakerace reads its cache without the lock, and adds a file
// that does not compile with the race detector, hoping for a SKIP.
package fakerace

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
	if books, ok := s.cache[shelf]; ok { // read without the lock: a race
		return books, nil
	}
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
