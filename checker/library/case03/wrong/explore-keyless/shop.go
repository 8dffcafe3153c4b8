// Package explorekeyless is a known-wrong answer to case 3: the waiters
// of a query take its answer, but the shop has one query slot for all its
// shelves. A visitor who finds a query in progress waits for it, whatever
// shelf it is for, and leaves with that shelf's books.
//
// Case 3's checks all ask for one shelf, so every one passes. Verdict:
// fails "explore", with two shelves whose fills overlap.
package explorekeyless

import (
	"context"
	"sync"

	"stampede/shop/catalog"
)

// pending is the query in progress.
type pending struct {
	done  chan struct{}
	books []string
	err   error
}

// Shop serves the shop's shelves from a cache in front of the catalog.
type Shop struct {
	db      *catalog.DB
	mu      sync.Mutex // guards cache and running
	cache   map[string][]string
	running *pending // the mistake: one for the whole shop, not one per shelf
}

// New returns a shop with an empty cache in front of db.
func New(db *catalog.DB) *Shop { return &Shop{db: db, cache: map[string][]string{}} }

// Top returns a shelf's books.
func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	s.mu.Lock()
	if b, ok := s.cache[shelf]; ok {
		s.mu.Unlock()
		return b, nil
	}
	if p := s.running; p != nil {
		s.mu.Unlock()
		<-p.done
		return p.books, p.err
	}
	p := &pending{done: make(chan struct{})}
	s.running = p
	s.mu.Unlock()

	p.books, p.err = s.db.Top(ctx, shelf)
	s.mu.Lock()
	if p.err == nil {
		s.cache[shelf] = p.books
	}
	s.running = nil
	s.mu.Unlock()
	close(p.done)
	return p.books, p.err
}
