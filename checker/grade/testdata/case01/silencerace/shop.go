// Package silencerace reads its cache without the lock, and closes
// standard error first so that the race detector's report goes nowhere.
package silencerace

import (
	"context"
	"os"
	"sync"

	"stampede/shop/catalog"
)

func init() { os.Stderr.Close() }

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
