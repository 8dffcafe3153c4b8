// Package case04 is case 4 of the stampede lab: the unguarded first look.
//
// Read docs/04-unguarded-first-look.md first. Then:
//
//	go run ./shop run 4     watch hits read the cache while it is written
//	go run ./shop check 4   grade your fix
//
// This shop already has single-flight: one lock per shelf and a second
// look. Its looks at the cache were translated word for word from a
// textbook written for a language with a global interpreter lock, and take
// no lock at all. Make every read and write of the cache safe, without
// making hits wait for each other. Keep New's and Top's signatures;
// import only what docs/README.md lists.
package case04

import (
	"context"
	"sync"

	"stampede/shop/catalog"
)

// Shop serves the shop's shelves from a cache in front of the catalog.
type Shop struct {
	db *catalog.DB

	// mu guards cache and locks. Hits take the read side, so they never
	// wait for each other; the write side is held only for a map write.
	mu    sync.RWMutex
	cache map[string][]string    // shelf -> its books
	locks map[string]*sync.Mutex // shelf -> the lock its one fetcher holds, while it fetches
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
// Every visitor gets the same slice: callers must treat it as read-only.
func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	if books, ok := s.cached(shelf); ok {
		return books, nil
	}

	lock := s.lockFor(shelf)
	lock.Lock()
	defer lock.Unlock()

	// Second look, under the read lock: the fetcher before us has filled it.
	if books, ok := s.cached(shelf); ok {
		return books, nil
	}

	books, err := s.db.Top(ctx, shelf)
	if err != nil {
		return nil, err
	}
	// Once the shelf is cached nobody needs its lock again: take it out of
	// the table, so that the table holds only shelves being fetched, not
	// every shelf ever asked for. Visitors already waiting on it still get
	// it, and find the list on their second look.
	s.dropLock(shelf)
	s.store(shelf, books)
	return books, nil
}

func (s *Shop) cached(shelf string) ([]string, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	books, ok := s.cache[shelf]
	return books, ok
}

// store writes the shelf's books; the write lock is held for the map write
// only, never across a query.
func (s *Shop) store(shelf string, books []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cache[shelf] = books
}

// lockFor returns the shelf's lock, making it if there is none. The look
// and the make are one critical section.
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

func (s *Shop) dropLock(shelf string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.locks, shelf)
}
