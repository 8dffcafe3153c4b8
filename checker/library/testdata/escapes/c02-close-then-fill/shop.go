// Package case02 is case 2 of the stampede lab: one lock for the whole shop.
//
// Read docs/02-global-lock.md first. Then:
//
//	go run ./shop run 2     watch the new-releases visitors wait
//	go run ./shop check 2   grade your fix
//
// The stampede is gone: one mutex guards the cache and is held across the
// query, so the bestseller list is queried once. But a visitor who wants
// the new releases now waits for the bestseller query too. Give each shelf
// a lock of its own, so that one slow shelf holds up only its own visitors.
// Keep New's and Top's signatures; import only what docs/README.md lists.
package case02

import (
	"context"
	"sync"

	"stampede/shop/catalog"
)

// flight is one query in progress for a shelf. done is closed when the
// query has returned.
type flight struct {
	done chan struct{}
}

// Shop serves the shop's shelves from a cache in front of the catalog.
type Shop struct {
	db *catalog.DB

	mu      sync.Mutex          // guards cache and flights; never held across a query
	cache   map[string][]string // shelf -> its books
	flights map[string]*flight  // shelf -> its query in progress
}

// New returns a shop with an empty cache in front of db.
func New(db *catalog.DB) *Shop {
	return &Shop{
		db:      db,
		cache:   make(map[string][]string),
		flights: make(map[string]*flight),
	}
}

// Top returns a shelf's books, from the cache when it has them. The first
// visitor to miss a shelf records a flight for it and queries; the others
// wait for that flight, and then look in the cache again. Only the shelf's
// own visitors wait. Every visitor gets the same slice: callers must treat
// it as read-only.
func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	for {
		s.mu.Lock()
		if books, ok := s.cache[shelf]; ok {
			s.mu.Unlock()
			return books, nil
		}
		f, inFlight := s.flights[shelf]
		if !inFlight {
			// Looking and recording the flight is one critical section,
			// so two visitors never both start one.
			f = &flight{done: make(chan struct{})}
			s.flights[shelf] = f
		}
		s.mu.Unlock()

		if !inFlight {
			return s.fetch(ctx, shelf, f)
		}
		<-f.done
		// The flight has landed: its books are in the cache, unless its
		// query failed, and then the loop starts a fresh flight.
	}
}

// fetch runs the shelf's query for its flight.
func (s *Shop) fetch(ctx context.Context, shelf string, f *flight) ([]string, error) {
	books, err := s.db.Top(ctx, shelf)
	s.land(shelf, f)
	if err == nil {
		s.store(shelf, books)
	}
	return books, err
}

// land takes the flight off the table and wakes its waiters.
func (s *Shop) land(shelf string, f *flight) {
	s.mu.Lock()
	delete(s.flights, shelf)
	s.mu.Unlock()
	close(f.done)
}

func (s *Shop) store(shelf string, books []string) {
	s.mu.Lock()
	s.cache[shelf] = books
	s.mu.Unlock()
}
