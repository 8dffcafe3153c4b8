// Package explorestalecopy is a known-wrong answer to case 2: per-shelf
// locks from a guarded table, as the chapter asks, and a cache that is
// never written in place: a fill publishes a new map. But the fill builds
// the new map from the one it read at its first look, before the query.
// When two shelves are filled at once, the later publication drops the
// earlier shelf, and its next visitor queries again.
//
// The two-shelves check fills two shelves at once, and nobody comes back.
// Verdict: fails "explore".
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

	mu    sync.RWMutex        // guards the cache pointer
	cache map[string][]string // never written once published

	locksMu sync.Mutex
	locks   map[string]*sync.Mutex
}

// New returns a shop with an empty cache in front of db.
func New(db *catalog.DB) *Shop {
	return &Shop{db: db, cache: map[string][]string{}, locks: map[string]*sync.Mutex{}}
}

func (s *Shop) snapshot() map[string][]string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.cache
}

func (s *Shop) lockFor(shelf string) *sync.Mutex {
	s.locksMu.Lock()
	defer s.locksMu.Unlock()
	l, ok := s.locks[shelf]
	if !ok {
		l = new(sync.Mutex)
		s.locks[shelf] = l
	}
	return l
}

// Top returns a shelf's books.
func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	old := s.snapshot()
	if b, ok := old[shelf]; ok {
		return b, nil
	}
	l := s.lockFor(shelf)
	l.Lock()
	defer l.Unlock()
	if b, ok := s.snapshot()[shelf]; ok {
		return b, nil
	}
	books, err := s.db.Top(ctx, shelf)
	if err != nil {
		return nil, err
	}
	next := maps.Clone(old) // the mistake: old is the map before the query
	next[shelf] = books
	s.mu.Lock()
	s.cache = next
	s.mu.Unlock()
	return books, nil
}
