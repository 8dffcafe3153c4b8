// Package explorestarterforgets is a known-wrong answer to case 5: the
// visitor who starts a flight is the one who takes it off the table, with
// a deferred delete as it leaves Top. When it waits for the query, that
// is when the flight lands. When it gives up first, the flight leaves the
// table while its query is still in the database, and the next visitor
// for the shelf starts a second query beside the first.
//
// The starter-gives-up check sends nobody after the starter has gone.
// Verdict: fails "explore", with a visitor who arrives after the starter
// gave up and before the query landed.
package explorestarterforgets

import (
	"context"
	"fmt"
	"sync"

	"stampede/shop/catalog"
)

type flight struct {
	done  chan struct{}
	books []string
	err   error
}

// Shop serves the shop's shelves from a cache in front of the catalog.
type Shop struct {
	db      *catalog.DB
	mu      sync.RWMutex
	cache   map[string][]string
	flights map[string]*flight
}

// New returns a shop with an empty cache in front of db.
func New(db *catalog.DB) *Shop {
	return &Shop{db: db, cache: map[string][]string{}, flights: map[string]*flight{}}
}

// Top returns a shelf's books, or the error of the query it waited for.
func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	s.mu.RLock()
	b, ok := s.cache[shelf]
	s.mu.RUnlock()
	if ok {
		return b, nil
	}
	s.mu.Lock()
	if b, ok := s.cache[shelf]; ok {
		s.mu.Unlock()
		return b, nil
	}
	f, joined := s.flights[shelf]
	if !joined {
		f = &flight{done: make(chan struct{})}
		s.flights[shelf] = f
		go s.fly(context.WithoutCancel(ctx), shelf, f)
		defer s.forget(shelf, f) // the mistake: tied to the starter's stay
	}
	s.mu.Unlock()
	select {
	case <-f.done:
		return f.books, f.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// forget takes the flight off the table, if it is still there.
func (s *Shop) forget(shelf string, f *flight) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.flights[shelf] == f {
		delete(s.flights, shelf)
	}
}

func (s *Shop) fly(ctx context.Context, shelf string, f *flight) {
	returned := false // recover cannot tell a return from a Goexit
	defer func() {
		if r := recover(); r != nil {
			f.books, f.err = nil, fmt.Errorf("%s: query panicked: %v", shelf, r)
		} else if !returned {
			f.books, f.err = nil, fmt.Errorf("%s: the query never returned", shelf)
		}
		s.mu.Lock()
		if f.err == nil {
			s.cache[shelf] = f.books
		}
		s.mu.Unlock()
		close(f.done)
	}()
	f.books, f.err = s.db.Top(ctx, shelf)
	returned = true
}
