// Package case02 is case 2 of the stampede lab: one lock for the whole shop.
//
// Read docs/02-global-lock.md first. Then:
//
//	go run ./shop run 2     watch the new-releases visitors wait
//	go run ./shop check 2   grade your fix
//
// The stampede is gone: one mutex guards the cache and is held across the
// query, so the bestseller list is queried once. But a visitor who wants
// the new releases now waits for the bestseller query too. Give each shelf
// a lock of its own, so that one slow shelf holds up only its own visitors.
// Keep New's and Top's signatures; import only what docs/README.md lists.
package case02

import (
	"context"
	"sync"

	"stampede/shop/catalog"
)

// Shop serves the shop's shelves from a cache in front of the catalog.
type Shop struct {
	db *catalog.DB

	mu    sync.RWMutex           // guards cache and locks; never held across a query
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

// Top returns a shelf's books, from the cache when it has them. Each shelf
// has a lock of its own: the visitor who takes it first queries, and the
// others wait for that shelf only. Every visitor gets the same slice:
// callers must treat it as read-only.
func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	if books, ok := s.cached(shelf); ok {
		return books, nil
	}

	lock := s.lockFor(shelf)
	lock.Lock()
	defer lock.Unlock()

	// Second look: whoever held the shelf's lock before us filled it.
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

// lockFor returns the shelf's lock, making it on first use. Almost every
// call finds the lock already there, so the look takes the read lock and
// only the first visitor of a shelf takes the write lock to make it.
func (s *Shop) lockFor(shelf string) *sync.Mutex {
	l, ok := s.existingLock(shelf)
	if !ok {
		l = s.newLock(shelf)
	}
	return l
}

func (s *Shop) existingLock(shelf string) (*sync.Mutex, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	l, ok := s.locks[shelf]
	return l, ok
}

func (s *Shop) newLock(shelf string) *sync.Mutex {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := new(sync.Mutex)
	s.locks[shelf] = l
	return l
}
