// Package explorestalesnapshot is a known-wrong answer to case 4: hits
// read a map that is never changed once published, behind an atomic
// pointer, with no lock at all, as the last hint allows. A fill publishes
// a copy with its shelf added. But the copy is made from the snapshot the
// visitor loaded at its first look, before the query: two fills that
// overlap start from the same old map, and the later one drops the
// earlier one's shelf.
//
// The checks fill shelves one after the other, or at once with nobody
// coming back for them. Verdict: fails "explore".
package explorestalesnapshot

import (
	"context"
	"maps"
	"sync"
	"sync/atomic"

	"stampede/shop/catalog"
)

type flight struct {
	done  chan struct{}
	books []string
	err   error
}

// Shop serves the shop's shelves from a cache in front of the catalog.
type Shop struct {
	db    *catalog.DB
	cache atomic.Pointer[map[string][]string]

	mu      sync.Mutex // guards flights
	flights map[string]*flight
}

// New returns a shop with an empty cache in front of db.
func New(db *catalog.DB) *Shop {
	s := &Shop{db: db, flights: map[string]*flight{}}
	s.cache.Store(&map[string][]string{})
	return s
}

// Top returns a shelf's books.
func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	snap := *s.cache.Load()
	if b, ok := snap[shelf]; ok {
		return b, nil
	}
	s.mu.Lock()
	if b, ok := (*s.cache.Load())[shelf]; ok {
		s.mu.Unlock()
		return b, nil
	}
	if f, ok := s.flights[shelf]; ok {
		s.mu.Unlock()
		<-f.done
		return f.books, f.err
	}
	f := &flight{done: make(chan struct{})}
	s.flights[shelf] = f
	s.mu.Unlock()

	f.books, f.err = s.db.Top(ctx, shelf)
	if f.err == nil {
		next := maps.Clone(snap) // the mistake: snap is from before the query
		next[shelf] = f.books
		s.cache.Store(&next)
	}
	s.mu.Lock()
	delete(s.flights, shelf)
	s.mu.Unlock()
	close(f.done)
	return f.books, f.err
}
