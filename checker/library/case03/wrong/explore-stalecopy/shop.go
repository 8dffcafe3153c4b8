// Package explorestalecopy is a known-wrong answer to case 3: the second
// look is there, under each shelf's lock, and the cache is a map that is
// replaced rather than written. The fill copies the map the visitor saw
// before it waited for the lock, so a shelf filled by someone else in the
// meantime is dropped from the copy, and its next visitor queries again.
//
// Case 3's checks fill one shelf. Verdict: fails "explore", with two
// shelves whose fills overlap and a visitor who comes back for the first.
package explorestalecopy

import (
	"context"
	"maps"
	"sync"

	"stampede/shop/catalog"
)

// Shop serves the shop's shelves from a cache in front of the catalog.
type Shop struct {
	db    *catalog.DB
	mu    sync.Mutex // guards cache (the pointer) and locks
	cache map[string][]string
	locks map[string]*sync.Mutex
}

// New returns a shop with an empty cache in front of db.
func New(db *catalog.DB) *Shop {
	return &Shop{db: db, cache: map[string][]string{}, locks: map[string]*sync.Mutex{}}
}

// Top returns a shelf's books.
func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	s.mu.Lock()
	before := s.cache
	l := s.locks[shelf]
	if l == nil {
		l = new(sync.Mutex)
		s.locks[shelf] = l
	}
	s.mu.Unlock()
	if b, ok := before[shelf]; ok {
		return b, nil
	}

	l.Lock()
	defer l.Unlock()
	s.mu.Lock()
	b, ok := s.cache[shelf] // the second look
	s.mu.Unlock()
	if ok {
		return b, nil
	}
	books, err := s.db.Top(ctx, shelf)
	if err != nil {
		return nil, err
	}
	next := maps.Clone(before) // the mistake: the map from before the wait
	next[shelf] = books
	s.mu.Lock()
	s.cache = next
	s.mu.Unlock()
	return books, nil
}
