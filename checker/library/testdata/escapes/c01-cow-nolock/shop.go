// Package case01 is case 1 of the stampede lab: the bestseller stampede.
//
// Read docs/01-bestseller-stampede.md first. Then:
//
//	go run ./shop run 1     watch the stampede
//	go run ./shop check 1   grade your fix
//
// Make Top single-flight: when many visitors miss the same shelf at once,
// one of them queries the database and the others wait for its answer.
// Keep New's and Top's signatures; import only what docs/README.md lists.
package case01

import (
	"context"
	"maps"
	"sync"
	"sync/atomic"

	"stampede/shop/catalog"
)

// shelves is a snapshot of the cache. A snapshot is never written once it
// has been published, so readers need no lock at all.
type shelves map[string][]string

// flight is one query in progress for a shelf.
type flight struct {
	done  chan struct{} // closed once books and err are set
	books []string
	err   error
}

// Shop serves the shop's shelves from a cache in front of the catalog.
type Shop struct {
	db *catalog.DB

	cache atomic.Pointer[shelves] // the current snapshot, read with no lock

	mu      sync.Mutex         // guards flights
	flights map[string]*flight // shelf -> its query in progress
}

// New returns a shop with an empty cache in front of db.
func New(db *catalog.DB) *Shop {
	s := &Shop{db: db, flights: make(map[string]*flight)}
	empty := shelves{}
	s.cache.Store(&empty)
	return s
}

// Top returns a shelf's books. The first visitor to miss a shelf records a
// flight and queries; the visitors who miss while it runs wait for it.
// Every visitor gets the same slice: callers must treat it as read-only.
func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	if books, ok := (*s.cache.Load())[shelf]; ok {
		return books, nil
	}

	s.mu.Lock()
	// Second look, under the flights' lock: a flight may have landed since.
	if books, ok := (*s.cache.Load())[shelf]; ok {
		s.mu.Unlock()
		return books, nil
	}
	f, inFlight := s.flights[shelf]
	if !inFlight {
		f = &flight{done: make(chan struct{})}
		s.flights[shelf] = f
	}
	s.mu.Unlock()

	if inFlight {
		<-f.done
		return f.books, f.err
	}

	f.books, f.err = s.db.Top(ctx, shelf)
	if f.err == nil {
		s.publish(shelf, f.books)
	}
	s.mu.Lock()
	delete(s.flights, shelf)
	s.mu.Unlock()
	close(f.done)
	return f.books, f.err
}

// publish adds a shelf to the cache: copy the snapshot, add the shelf, and
// swap the copy in. Readers keep reading the old snapshot until the swap.
func (s *Shop) publish(shelf string, books []string) {
	next := with(*s.cache.Load(), shelf, books)
	s.cache.Store(next)
}

// with returns a copy of snap with the shelf added; snap is left as it is.
func with(snap shelves, shelf string, books []string) *shelves {
	next := maps.Clone(snap)
	next[shelf] = books
	return &next
}
