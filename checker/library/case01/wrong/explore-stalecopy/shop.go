// Package explorestalecopy is a known-wrong answer to case 1: the cache is
// a map that is replaced, never changed, and a fill copies the map it saw
// at its first look instead of the map as it is when it writes. Two fills
// that overlap each start from the same old map, and the one that writes
// last throws away the other's shelf. The next visitor for the lost shelf
// finds nothing and queries again.
//
// The checks that fill two shelves at once have no visitor come back for
// the lost one. Verdict: fails "explore".
package explorestalecopy

import (
	"context"
	"maps"
	"sync"

	"stampede/shop/catalog"
)

// Shop serves the shop's shelves from a cache in front of the catalog.
type Shop struct {
	db *catalog.DB

	mu    sync.Mutex             // guards cache (the pointer) and locks
	cache map[string][]string    // replaced by a copy on every fill, never written
	locks map[string]*sync.Mutex // shelf -> the lock its fetcher holds
}

// New returns a shop with an empty cache in front of db.
func New(db *catalog.DB) *Shop {
	return &Shop{db: db, cache: map[string][]string{}, locks: map[string]*sync.Mutex{}}
}

// Top returns a shelf's books.
func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	s.mu.Lock()
	seen := s.cache // the map as it is now; nobody writes into it
	l, ok := s.locks[shelf]
	if !ok {
		l = new(sync.Mutex)
		s.locks[shelf] = l
	}
	s.mu.Unlock()
	if b, ok := seen[shelf]; ok {
		return b, nil
	}

	l.Lock()
	defer l.Unlock()
	s.mu.Lock()
	b, ok := s.cache[shelf]
	s.mu.Unlock()
	if ok {
		return b, nil
	}
	books, err := s.db.Top(ctx, shelf)
	if err != nil {
		return nil, err
	}
	next := maps.Clone(seen) // the mistake: seen may be old by now
	next[shelf] = books
	s.mu.Lock()
	s.cache = next
	s.mu.Unlock()
	return books, nil
}
