// Package case02 is the reference solution of case 2, one lock for the
// whole shop: a lock per shelf, taken from a table that has a guard of its
// own. The chapter is docs/02-global-lock.md.
package case02

import (
	"context"
	"sync"

	"stampede/shop/catalog"
)

// Shop serves the shop's shelves from a cache in front of the catalog.
type Shop struct {
	db *catalog.DB

	mu    sync.RWMutex        // guards cache; never held across a query
	cache map[string][]string // shelf -> its books

	locksMu sync.Mutex             // guards locks
	locks   map[string]*sync.Mutex // shelf -> the lock its one fetcher holds
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
// once, one of them queries the database and the rest wait for its answer;
// visitors of other shelves do not wait at all.
// Every visitor of a shelf gets the same cached slice, so callers must
// treat it as read-only; a copy per hit would cost an allocation each.
func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	if books, ok := s.cached(shelf); ok {
		return books, nil
	}

	// The lock is the shelf's own, so the bestseller query holds up only
	// the bestseller visitors.
	lock := s.lockFor(shelf)
	lock.Lock()
	defer lock.Unlock()

	// Whoever held the lock before us has filled the cache.
	if books, ok := s.cached(shelf); ok {
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

func (s *Shop) cached(shelf string) ([]string, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	books, ok := s.cache[shelf]
	return books, ok
}

// lockFor returns the shelf's lock, making it on first use. The looking and
// the making are one critical section: split in two, two visitors could
// both find no lock, make one each, and both query.
// The table only grows, a lock per shelf ever asked for: production code
// removes a shelf's lock when its flight lands, or bounds the key space.
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
