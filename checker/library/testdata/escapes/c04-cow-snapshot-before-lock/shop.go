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
	"maps"
	"sync"
	"sync/atomic"

	"stampede/shop/catalog"
)

// snapshot is one version of the cache. Once published it is never
// written again, so a hit reads it with no lock at all.
type snapshot map[string][]string

// Shop serves the shop's shelves from a cache in front of the catalog.
type Shop struct {
	db *catalog.DB

	cache  atomic.Pointer[snapshot] // the current snapshot: one atomic load per hit
	fillMu sync.Mutex               // fills publish one at a time

	mu    sync.Mutex             // guards locks
	locks map[string]*sync.Mutex // shelf -> the lock its one fetcher holds
}

// New returns a shop with an empty cache in front of db.
func New(db *catalog.DB) *Shop {
	s := &Shop{db: db, locks: make(map[string]*sync.Mutex)}
	s.cache.Store(&snapshot{})
	return s
}

// Top returns a shelf's books. When many visitors miss the same shelf at
// once, one of them queries the database and the rest wait for its answer.
// A hit is one atomic load and a read of a map nobody writes. Every
// visitor gets the same slice: callers must treat it as read-only.
func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	if books, ok := s.cached(shelf); ok {
		return books, nil
	}

	lock := s.lockFor(shelf)
	lock.Lock()
	defer lock.Unlock()

	// Whoever held the shelf's lock before us has published the shelf.
	if books, ok := s.cached(shelf); ok {
		return books, nil
	}

	books, err := s.db.Top(ctx, shelf)
	if err != nil {
		return nil, err
	}
	s.publish(shelf, books)
	return books, nil
}

func (s *Shop) cached(shelf string) ([]string, bool) {
	books, ok := (*s.cache.Load())[shelf]
	return books, ok
}

// publish copies the current snapshot with the shelf added and swaps the
// copy in. Two fills must not both publish at once, or one would swap in a
// copy without the other's shelf: fillMu puts them in a line.
func (s *Shop) publish(shelf string, books []string) {
	cur := s.cache.Load()
	s.fillMu.Lock()
	defer s.fillMu.Unlock()
	next := maps.Clone(*cur)
	next[shelf] = books
	s.cache.Store(&next)
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
