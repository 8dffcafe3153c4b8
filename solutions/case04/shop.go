// Package case04 is the reference solution of case 4, the unguarded first
// look: the per-shelf single-flight of case 1, with every look at the cache
// under the read side of a sync.RWMutex. The chapter is
// docs/04-unguarded-first-look.md.
package case04

import (
	"context"
	"sync"

	"stampede/shop/catalog"
)

// Shop serves the shop's shelves from a cache in front of the catalog.
type Shop struct {
	db *catalog.DB

	// mu guards cache and locks. Go has no global interpreter lock: a map
	// read while another goroutine writes it is a data race, and may stop
	// the program. Hits take the read side, which any number of goroutines
	// hold at once, so hits never wait for each other; only a fill takes
	// the write side, and only for as long as the map write takes.
	mu    sync.RWMutex
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
// Every visitor of a shelf gets the same cached slice: callers must treat
// it as read-only (slices.Clone it to change it). Copying it here instead
// would put an allocation on every hit.
func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	if books, ok := s.cached(shelf); ok {
		return books, nil
	}

	lock := s.lockFor(shelf)
	lock.Lock()
	defer lock.Unlock()

	// The second look needs the read lock too: the shelf's lock keeps
	// out the other fetchers of this shelf, not the fetchers of the
	// others, who write the same map.
	if books, ok := s.cached(shelf); ok {
		return books, nil
	}

	books, err := s.db.Top(ctx, shelf)
	if err != nil {
		return nil, err
	}
	// The write lock is taken after the query, not around it, so that
	// hits on other shelves never wait for a slow query.
	s.mu.Lock()
	s.cache[shelf] = books
	s.mu.Unlock()
	return books, nil
}

// cached is a look at the cache under the read lock. It takes the lock
// itself, so its callers must not hold it: a goroutine that read-locks
// twice deadlocks once a writer queues between its two RLocks.
func (s *Shop) cached(shelf string) ([]string, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	books, ok := s.cache[shelf]
	return books, ok
}

// lockFor returns the shelf's lock, making it on first use under the write
// lock, so that two visitors who make it at once end up with one.
// The table only grows, a lock per shelf ever asked for: production code
// removes a shelf's lock when its flight lands, or bounds the key space.
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
