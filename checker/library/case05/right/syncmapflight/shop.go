// Package syncmapflight is a known-right answer to case 5, written blind (issue 26):
//
// Fixed: hits read a sync.Map; misses share a flight per shelf, kept in a
// table under s.mu. Each flight's query runs on a goroutine of its own, on
// a context that keeps the starter's values but not its cancellation, and
// the flight lands in one deferred function however the query ends: it
// returns, it fails, it panics, or it calls runtime.Goexit.
package syncmapflight

import (
	"context"
	"fmt"
	"sync"

	"stampede/shop/catalog"
)

// A flight is one query in progress for a shelf.
type flight struct {
	done  chan struct{} // closed once books and err are final
	books []string
	err   error
}

// Shop serves the shop's shelves from a cache in front of the catalog.
type Shop struct {
	db *catalog.DB

	cache sync.Map // shelf (string) -> its books ([]string); only landed flights store

	mu      sync.Mutex         // guards flights, and orders a landing against a join
	flights map[string]*flight // shelf -> its query in the air
}

// New returns a shop with an empty cache in front of db.
func New(db *catalog.DB) *Shop {
	return &Shop{db: db, flights: make(map[string]*flight)}
}

// Top returns a shelf's books. Visitors who miss a shelf while its query
// runs share that query's answer or its error; a visitor whose context ends
// returns its context's error at once, and the query goes on for the
// others. A failure is never cached: the next visitor starts a new query.
// The slice is shared by every visitor: callers must treat it as read-only.
func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	if books, ok := s.load(shelf); ok {
		return books, nil
	}
	f, books, hit := s.board(ctx, shelf)
	if hit {
		return books, nil
	}
	select {
	case <-f.done:
		return f.books, f.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// board looks at the cache again and finds or starts the shelf's flight,
// all under s.mu, so that no flight can land between the look and the join.
func (s *Shop) board(ctx context.Context, shelf string) (*flight, []string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if books, ok := s.load(shelf); ok {
		return nil, books, true
	}
	if f, ok := s.flights[shelf]; ok {
		return f, nil, false
	}
	f := &flight{done: make(chan struct{})}
	s.flights[shelf] = f
	go s.run(context.WithoutCancel(ctx), shelf, f)
	return f, nil, false
}

// run queries the database for the flight and lands it.
func (s *Shop) run(ctx context.Context, shelf string, f *flight) {
	var books []string
	var err error
	normal := false
	defer func() {
		if !normal {
			// recover is nil after runtime.Goexit, and not nil after a panic.
			if r := recover(); r != nil {
				err = fmt.Errorf("shop: %s: the query panicked: %v", shelf, r)
			} else {
				err = fmt.Errorf("shop: %s: the query's goroutine exited", shelf)
			}
			books = nil
		}
		f.books, f.err = books, err
		s.mu.Lock()
		if err == nil {
			s.cache.Store(shelf, books)
		}
		delete(s.flights, shelf)
		s.mu.Unlock()
		close(f.done)
	}()
	books, err = s.db.Top(ctx, shelf)
	if err != nil {
		err = fmt.Errorf("shop: %s: %w", shelf, err)
	}
	normal = true
}

// load is a look at the cache; it takes no lock of the shop's.
func (s *Shop) load(shelf string) ([]string, bool) {
	v, ok := s.cache.Load(shelf)
	if !ok {
		return nil, false
	}
	return v.([]string), true
}
