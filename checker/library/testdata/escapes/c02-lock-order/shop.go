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
//
// The table of locks holds a lock only while its shelf is not cached: the
// fill drops the shelf's lock in the same step as it caches the list, so
// the table stays as small as the number of shelves being fetched.
type Shop struct {
	db *catalog.DB

	cacheMu sync.RWMutex        // guards cache; hits share it
	cache   map[string][]string // shelf -> its books

	tableMu sync.Mutex             // guards locks
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

// Top returns a shelf's books, from the cache when it has them. Each shelf
// being fetched has a lock of its own: the visitor who takes it first
// queries, and only that shelf's visitors wait. Every visitor gets the same
// slice: callers must treat it as read-only.
func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	if books, ok := s.cached(shelf); ok {
		return books, nil
	}

	lock, books, ok := s.lockFor(shelf)
	if ok {
		return books, nil // filled while we were on our way to the table
	}
	lock.Lock()
	defer lock.Unlock()

	// Second look: whoever held the shelf's lock before us filled it.
	if books, ok := s.cached(shelf); ok {
		return books, nil
	}
	books, err := s.db.Top(ctx, shelf)
	if err != nil {
		return nil, err // the lock stays in the table for the next try
	}
	s.fill(shelf, books)
	return books, nil
}

func (s *Shop) cached(shelf string) ([]string, bool) {
	s.cacheMu.RLock()
	defer s.cacheMu.RUnlock()
	books, ok := s.cache[shelf]
	return books, ok
}

// lockFor returns the shelf's lock, making it on first use, or the books
// if the shelf has been cached since the first look. The look at the cache
// is made under the table's guard: a fill drops the shelf's lock, so a
// visitor who made a new lock after the fill would query again.
func (s *Shop) lockFor(shelf string) (*sync.Mutex, []string, bool) {
	s.tableMu.Lock()
	s.cacheMu.RLock()
	defer s.tableMu.Unlock()
	books, ok := s.cache[shelf]
	s.cacheMu.RUnlock()
	if ok {
		return nil, books, true
	}
	l, found := s.locks[shelf]
	if !found {
		l = new(sync.Mutex)
		s.locks[shelf] = l
	}
	return l, nil, false
}

// fill caches the shelf's books and drops its lock from the table, in one
// step: a visitor at the table then finds either the lock or the books.
// Waiters already holding the old lock find the books on their second look.
func (s *Shop) fill(shelf string, books []string) {
	s.cacheMu.Lock()
	s.tableMu.Lock()
	s.cache[shelf] = books
	delete(s.locks, shelf)
	s.tableMu.Unlock()
	s.cacheMu.Unlock()
}
