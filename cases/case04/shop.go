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

	mu    sync.Mutex             // guards locks
	locks map[string]*sync.Mutex // shelf -> the lock its one fetcher holds
	cache map[string][]string    // shelf -> its books
}

// New returns a shop with an empty cache in front of db.
func New(db *catalog.DB) *Shop {
	return &Shop{
		db:    db,
		locks: make(map[string]*sync.Mutex),
		cache: make(map[string][]string),
	}
}

// Top returns a shelf's books. When many visitors miss the same shelf at
// once, one of them queries the database and the rest wait for its answer.
func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	// The fast path, as the textbook has it: a hit takes no lock at all.
	if books, ok := s.cache[shelf]; ok {
		return books, nil
	}

	lock := s.lockFor(shelf)
	lock.Lock()
	defer lock.Unlock()

	// Whoever held the shelf's lock before us has filled the cache.
	if books, ok := s.cache[shelf]; ok {
		return books, nil
	}

	books, err := s.db.Top(ctx, shelf)
	if err != nil {
		return nil, err
	}
	s.cache[shelf] = books // we hold the shelf's lock, as the textbook does
	return books, nil
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
