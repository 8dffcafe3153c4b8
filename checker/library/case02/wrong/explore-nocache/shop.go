// Package explorenocache is a known-wrong answer to case 2: a table of
// flights, one per shelf, and no cache. The student took "the visitors of
// a shelf share one query" for the whole fix: the flight answers everyone
// who joins it, and once it has landed and left the table, nothing keeps
// the list. The next visitor of the shelf queries again.
//
// Every check plays one burst per shelf, so every check passes. Verdict:
// fails "explore", with a visitor who asks after the fill has landed.
package explorenocache

import (
	"context"
	"sync"

	"stampede/shop/catalog"
)

type flight struct {
	done  chan struct{}
	books []string
	err   error
}

// Shop serves the shop's shelves in front of the catalog.
type Shop struct {
	db      *catalog.DB
	mu      sync.Mutex         // guards flights
	flights map[string]*flight // shelf -> its query in progress
}

// New returns a shop in front of db.
func New(db *catalog.DB) *Shop { return &Shop{db: db, flights: map[string]*flight{}} }

// Top returns a shelf's books.
func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	s.mu.Lock()
	if f, ok := s.flights[shelf]; ok {
		s.mu.Unlock()
		<-f.done
		return f.books, f.err
	}
	f := &flight{done: make(chan struct{})}
	s.flights[shelf] = f
	s.mu.Unlock()

	f.books, f.err = s.db.Top(ctx, shelf)
	s.mu.Lock()
	delete(s.flights, shelf) // the mistake: the books leave with the flight
	s.mu.Unlock()
	close(f.done)
	return f.books, f.err
}
