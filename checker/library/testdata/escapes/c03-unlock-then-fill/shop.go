// Package case03 is case 3 of the stampede lab: the missing second look.
//
// Read docs/03-second-look.md first. Then:
//
//	go run ./shop run 3     watch the queries queue up
//	go run ./shop check 3   grade your fix
//
// Each shelf has its own lock now, and the table of locks is guarded. Yet
// the visitors who waited for the lock still go to the database, one after
// another, each as soon as it gets the lock. Make a visitor who waited use
// the list that the visitor before it fetched, instead of querying again.
// Keep New's and Top's signatures; import only what docs/README.md lists.
package case03

import (
	"context"
	"sync"

	"stampede/shop/catalog"
)

// Shop serves the shop's shelves from a cache in front of the catalog.
type Shop struct {
	db *catalog.DB

	mu    sync.Mutex             // guards cache and locks
	cache map[string][]string    // shelf -> its books
	locks map[string]*sync.Mutex // shelf -> the lock its fetcher holds
}

// New returns a shop with an empty cache in front of db.
func New(db *catalog.DB) *Shop {
	return &Shop{
		db:    db,
		cache: make(map[string][]string),
		locks: make(map[string]*sync.Mutex),
	}
}

// Top returns a shelf's books, from the cache when it has them. The
// visitor who takes the shelf's lock first queries; the ones who waited for
// the lock look in the cache again and find its list. Every visitor gets
// the same slice: callers must treat it as read-only.
func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	if books, ok := s.cached(shelf); ok {
		return books, nil
	}

	lock := s.lockFor(shelf)
	lock.Lock()
	// Second look: the visitor who held the lock before us has fetched it.
	if books, ok := s.cached(shelf); ok {
		lock.Unlock()
		return books, nil
	}

	books, err := s.db.Top(ctx, shelf)
	// The shelf's lock is only there to keep the query single: let the
	// waiters go as soon as it has answered.
	lock.Unlock()
	if err == nil {
		s.store(shelf, books)
	}
	return books, err
}

// cached is a look at the cache under the shop's mutex.
func (s *Shop) cached(shelf string) ([]string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	books, ok := s.cache[shelf]
	return books, ok
}

func (s *Shop) store(shelf string, books []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cache[shelf] = books
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
