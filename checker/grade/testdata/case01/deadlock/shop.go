// Package deadlock takes the same mutex twice.
package deadlock

import (
	"context"
	"sync"

	"stampede/shop/catalog"
)

type Shop struct {
	db *catalog.DB
	mu sync.Mutex
}

func New(db *catalog.DB) *Shop { return &Shop{db: db} }

func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	s.mu.Lock()
	s.mu.Lock() // the line every visitor gets stuck at
	defer s.mu.Unlock()
	return s.db.Top(ctx, shelf)
}
