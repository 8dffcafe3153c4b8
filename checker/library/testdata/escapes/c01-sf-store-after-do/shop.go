// Package case01 is case 1 of the stampede lab: the bestseller stampede.
//
// Read docs/01-bestseller-stampede.md first. Then:
//
//	go run ./shop run 1     watch the stampede
//	go run ./shop check 1   grade your fix
//
// Make Top single-flight: when many visitors miss the same shelf at once,
// one of them queries the database and the others wait for its answer.
// Keep New's and Top's signatures; import only what docs/README.md lists.
package case01

import (
	"context"
	"sync"

	"golang.org/x/sync/singleflight"

	"stampede/shop/catalog"
)

// Shop serves the shop's shelves from a cache in front of the catalog.
type Shop struct {
	db      *catalog.DB
	flights singleflight.Group // one query per shelf at a time

	mu    sync.RWMutex
	cache map[string][]string // shelf -> its books
}

// New returns a shop with an empty cache in front of db.
func New(db *catalog.DB) *Shop {
	return &Shop{db: db, cache: make(map[string][]string)}
}

// Top returns a shelf's books, from the cache when it has them. Visitors
// who miss the same shelf at once share one query through singleflight.
// Every visitor gets the same slice: callers must treat it as read-only.
func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	if books, ok := s.cached(shelf); ok {
		return books, nil
	}

	books, err := s.fetch(ctx, shelf)
	if err == nil {
		s.store(shelf, books)
	}
	return books, err
}

// fetch runs the shelf's query once for every visitor who asks while it
// runs: singleflight hands them all its answer.
func (s *Shop) fetch(ctx context.Context, shelf string) ([]string, error) {
	v, err, _ := s.flights.Do(shelf, func() (any, error) {
		return s.db.Top(ctx, shelf)
	})
	if err != nil {
		return nil, err
	}
	return v.([]string), nil
}

func (s *Shop) cached(shelf string) ([]string, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	books, ok := s.cache[shelf]
	return books, ok
}

func (s *Shop) store(shelf string, books []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cache[shelf] = books
}
