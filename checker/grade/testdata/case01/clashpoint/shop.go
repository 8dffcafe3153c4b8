// Package clashpoint is a correct enough shop (one lock for every shelf)
// with a name of its own that the grader's copy with schedule points also
// gives its import: that copy does not compile, and the grader grades the
// file as it is.
package clashpoint

import (
	"context"
	"sync"

	"stampede/shop/catalog"
)

var stampedepoint = "the student's own"

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
	if err == nil {
		s.cache[shelf] = books
	}
	return books, err
}
