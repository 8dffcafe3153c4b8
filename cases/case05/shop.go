// Package case05 is case 5 of the stampede lab: the fetch that fails.
//
// Read docs/05-fetch-that-fails.md first. Then:
//
//	go run ./shop run 5     watch one failed query stop the shelf
//	go run ./shop check 5   grade your fix
//
// This shop has single-flight with one lock per shelf, two looks and a
// guarded cache. Nobody tried it with a database that fails. Make every
// visitor of a failed query get its error, promptly, and the next visitor
// a fresh try; let a visitor who gives up leave without stopping the query
// for the others. Keep New and Top as they are; imports: docs/README.md.
package case05

import (
	"context"
	"fmt"
	"sync"

	"stampede/shop/catalog"
)

// Shop serves the shop's shelves from a cache in front of the catalog.
type Shop struct {
	db *catalog.DB

	mu    sync.RWMutex           // guards cache and locks
	cache map[string][]string    // shelf -> its books
	locks map[string]*sync.Mutex // shelf -> the lock its one fetcher holds
}

// New returns a shop with an empty cache in front of db.
func New(db *catalog.DB) *Shop {
	return &Shop{
		db:    db,
		cache: make(map[string][]string),
		locks: make(map[string]*sync.Mutex),
	}
}

// Top returns a shelf's books. When many visitors miss the same shelf at
// once, one of them queries the database and the rest wait for its answer.
func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	if books, ok := s.cached(shelf); ok {
		return books, nil
	}

	lock := s.lockFor(shelf)
	lock.Lock()
	if books, ok := s.cached(shelf); ok {
		lock.Unlock()
		return books, nil
	}

	books, err := s.db.Top(ctx, shelf)
	if err != nil {
		return nil, fmt.Errorf("shop: %s: %w", shelf, err)
	}
	s.mu.Lock()
	s.cache[shelf] = books
	s.mu.Unlock()
	lock.Unlock()
	return books, nil
}

// cached is a look at the cache under the read lock.
func (s *Shop) cached(shelf string) ([]string, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	books, ok := s.cache[shelf]
	return books, ok
}

// lockFor returns the shelf's lock, making it on first use.
func (s *Shop) lockFor(shelf string) *sync.Mutex {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.locks[shelf]
	if !ok {
		l = new(sync.Mutex)
		s.locks[shelf] = l
	}
	return l
}
