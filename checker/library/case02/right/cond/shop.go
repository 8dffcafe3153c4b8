// Package cond is a right answer to case 2, written blind for issue 26:
// single-flight with one mutex and a sync.Cond. The mutex
// is held only for map work, never across a query; visitors who find a
// call in progress for their shelf wait on the condition until it lands.
package cond

import (
	"context"
	"errors"
	"sync"

	"stampede/shop/catalog"
)

// A call is one query for a shelf. Its fields are guarded by Shop.mu.
type call struct {
	done  bool
	books []string
	err   error
}

// Shop serves the shop's shelves from a cache in front of the catalog.
type Shop struct {
	db *catalog.DB

	mu     sync.Mutex          // guards cache, calls and every call
	landed *sync.Cond          // broadcast whenever a call lands
	cache  map[string][]string // shelf -> its books
	calls  map[string]*call    // shelf -> its query in progress
}

// New returns a shop with an empty cache in front of db.
func New(db *catalog.DB) *Shop {
	s := &Shop{
		db:    db,
		cache: make(map[string][]string),
		calls: make(map[string]*call),
	}
	s.landed = sync.NewCond(&s.mu)
	return s
}

var errNoAnswer = errors.New("shop: the query did not return")

// Top returns a shelf's books. The slice is shared: treat it as read-only.
func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	s.mu.Lock()
	if books, ok := s.cache[shelf]; ok {
		s.mu.Unlock()
		return books, nil
	}
	if c, ok := s.calls[shelf]; ok {
		for !c.done {
			s.landed.Wait()
		}
		s.mu.Unlock()
		return c.books, c.err
	}
	c := &call{}
	s.calls[shelf] = c
	s.mu.Unlock()

	books, err := []string(nil), errNoAnswer
	defer func() { s.land(shelf, c, books, err) }()
	books, err = s.db.Top(ctx, shelf)
	return books, err
}

// land records a call's result, caches a good one, takes the call off the
// table and wakes its waiters, all in one critical section.
func (s *Shop) land(shelf string, c *call, books []string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c.books, c.err, c.done = books, err, true
	if err == nil {
		s.cache[shelf] = books
	}
	delete(s.calls, shelf)
	s.landed.Broadcast()
}
