// Package cowcalls is a known-right answer to case 4, written blind (issue 26):
//
// Fixed with a copy-on-write cache: the books live in a map that is never
// written once it is published through an atomic pointer. A hit loads the
// pointer and reads that map, taking no lock at all, so hits never wait for
// each other or for a fill. A fill copies the map, adds its shelf and
// publishes the copy, under s.mu, which also guards the table of calls in
// progress, so that two fills never publish copies that lose each other's
// shelf, and a miss's second look and its joining of a call are one step.
package cowcalls

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"stampede/shop/catalog"
)

// A call is one query in progress for a shelf, shared by every visitor who
// misses that shelf while it runs.
type call struct {
	done  chan struct{} // closed once books and err are set
	books []string
	err   error
}

// Shop serves the shop's shelves from a cache in front of the catalog.
type Shop struct {
	db *catalog.DB

	books atomic.Pointer[map[string][]string] // shelf -> its books; a published map is never written

	mu    sync.Mutex       // serialises publishing, and guards calls
	calls map[string]*call // shelf -> its query in progress
}

// New returns a shop with an empty cache in front of db.
func New(db *catalog.DB) *Shop {
	s := &Shop{db: db, calls: make(map[string]*call)}
	empty := make(map[string][]string)
	s.books.Store(&empty)
	return s
}

// Top returns a shelf's books. When many visitors miss the same shelf at
// once, the first one queries the database and the rest wait for its
// answer, or its error. Every visitor of a shelf gets the same slice:
// callers must treat it as read-only.
func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	if books, ok := s.lookup(shelf); ok {
		return books, nil
	}

	s.mu.Lock()
	// Second look: a fill may have published the shelf since the first.
	if books, ok := s.lookup(shelf); ok {
		s.mu.Unlock()
		return books, nil
	}
	if c, ok := s.calls[shelf]; ok {
		s.mu.Unlock()
		select {
		case <-c.done:
			return c.books, c.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	c := &call{done: make(chan struct{})}
	s.calls[shelf] = c
	s.mu.Unlock()

	// Land the call however the query ends, a panic included, so that its
	// waiters are never left waiting and the next miss can try again.
	returned := false
	defer func() {
		if !returned {
			c.books, c.err = nil, fmt.Errorf("shop: %s: the query did not return", shelf)
		}
		s.mu.Lock()
		if c.err == nil {
			s.publish(shelf, c.books)
		}
		delete(s.calls, shelf)
		s.mu.Unlock()
		close(c.done)
	}()
	c.books, c.err = s.db.Top(ctx, shelf)
	returned = true
	return c.books, c.err
}

// lookup is a look at the published map: one atomic load, no lock.
func (s *Shop) lookup(shelf string) ([]string, bool) {
	m := *s.books.Load()
	books, ok := m[shelf]
	return books, ok
}

// publish adds a shelf to a copy of the map and publishes the copy. The
// caller holds s.mu, so no other fill copies the map meanwhile.
func (s *Shop) publish(shelf string, books []string) {
	old := *s.books.Load()
	next := make(map[string][]string, len(old)+1)
	for k, v := range old {
		next[k] = v
	}
	next[shelf] = books
	s.books.Store(&next)
}
