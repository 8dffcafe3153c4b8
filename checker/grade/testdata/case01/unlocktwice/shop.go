// Package unlocktwice unlocks a mutex it does not hold: a fatal error,
// which no recover can catch.
package unlocktwice

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
	s.mu.Unlock() // fatal error: sync: unlock of unlocked mutex
	return s.db.Top(ctx, shelf)
}
