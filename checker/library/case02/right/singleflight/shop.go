// Package singleflight is a known-right answer with
// golang.org/x/sync/singleflight: the group keys its flights by shelf, and
// the function it runs looks in the cache once more, for the visitor who
// missed just as the previous flight was landing.
//
// Verdict: passes every check.
package singleflight

import (
	"context"
	"sync"

	"golang.org/x/sync/singleflight"

	"stampede/shop/catalog"
)

type Shop struct {
	db      *catalog.DB
	flights singleflight.Group
	mu      sync.RWMutex
	cache   map[string][]string
}

func New(db *catalog.DB) *Shop { return &Shop{db: db, cache: map[string][]string{}} }

func (s *Shop) hit(shelf string) ([]string, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	b, ok := s.cache[shelf]
	return b, ok
}

func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	if b, ok := s.hit(shelf); ok {
		return b, nil
	}
	v, err, _ := s.flights.Do(shelf, func() (any, error) {
		if b, ok := s.hit(shelf); ok {
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
	})
	if err != nil {
		return nil, err
	}
	return v.([]string), nil
}
