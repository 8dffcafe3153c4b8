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
	"sync/atomic"

	"stampede/shop/catalog"
)

// slot is a shelf being fetched. The visitor who claims it queries; the
// others wait on done and take its answer, so nobody queues behind the
// fetcher only to query again.
type slot struct {
	claimed atomic.Bool
	done    chan struct{} // closed once books and err are set
	books   []string
	err     error
}

// Shop serves the shop's shelves from a cache in front of the catalog.
type Shop struct {
	db *catalog.DB

	mu    sync.Mutex          // guards cache and slots
	cache map[string][]string // shelf -> its books
	slots map[string]*slot    // shelf -> the fetch in progress
}

// New returns a shop with an empty cache in front of db.
func New(db *catalog.DB) *Shop {
	return &Shop{
		db:    db,
		cache: make(map[string][]string),
		slots: make(map[string]*slot),
	}
}

// Top returns a shelf's books, from the cache when it has them. Every
// visitor gets the same slice: callers must treat it as read-only.
func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	books, sl := s.lookup(shelf)
	if sl == nil {
		return books, nil
	}
	if sl.claimed.Load() {
		// Somebody is fetching the shelf: take their answer.
		<-sl.done
		return sl.books, sl.err
	}
	sl.claimed.Store(true)

	sl.books, sl.err = s.db.Top(ctx, shelf)
	s.mu.Lock()
	if sl.err == nil {
		s.cache[shelf] = sl.books
	}
	delete(s.slots, shelf) // a failed fetch is not kept: the next visitor tries again
	s.mu.Unlock()
	close(sl.done)
	return sl.books, sl.err
}

// lookup returns the shelf's books if they are cached, or else the shelf's
// slot, making it on first use. The look and the make are one critical
// section, so every visitor of a burst gets the same slot.
func (s *Shop) lookup(shelf string) ([]string, *slot) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if books, ok := s.cache[shelf]; ok {
		return books, nil
	}
	sl, ok := s.slots[shelf]
	if !ok {
		sl = &slot{done: make(chan struct{})}
		s.slots[shelf] = sl
	}
	return nil, sl
}
