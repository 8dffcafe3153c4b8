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

	"stampede/shop/catalog"
)

// Shop serves the shop's shelves from a cache in front of the catalog.
type Shop struct {
	db *catalog.DB

	mu    sync.Mutex
	cache map[string][]string // shelf -> its books
}

// New returns a shop with an empty cache in front of db.
func New(db *catalog.DB) *Shop {
	return &Shop{db: db, cache: make(map[string][]string)}
}

// Top returns a shelf's books, from the cache when it has them.
func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	s.mu.Lock()
	books, ok := s.cache[shelf]
	s.mu.Unlock()
	if ok {
		return books, nil
	}

	books, err := s.db.Top(ctx, shelf)
	if err != nil {
		return nil, err
	}

	s.mu.Lock()
	s.cache[shelf] = books
	s.mu.Unlock()
	return books, nil
}
