// Package explorenocache is a known-wrong answer to case 5: a table of
// flights that does everything the chapter asks of a flight (shared
// outcome, errors included; a deferred landing that recovers a panic; a
// query on a context its starter cannot cancel; waiters who can give up),
// and no cache. Once a flight has landed with the list and left the table,
// the next visitor starts a new query.
//
// The not-cached check's last visitor is supposed to query, and does; no
// check sends a visitor after a success. Verdict: fails "explore".
package explorenocache

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

// Shop serves the shop's shelves in front of the catalog.
type Shop struct {
	db      *catalog.DB
	mu      sync.Mutex
	flights map[string]*flight
}

// New returns a shop in front of db.
func New(db *catalog.DB) *Shop { return &Shop{db: db, flights: map[string]*flight{}} }

// Top returns a shelf's books, or the error of the query it waited for.
func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	s.mu.Lock()
	f, ok := s.flights[shelf]
	if !ok {
		f = &flight{done: make(chan struct{})}
		s.flights[shelf] = f
		go s.fly(context.WithoutCancel(ctx), shelf, f)
	}
	s.mu.Unlock()
	select {
	case <-f.done:
		return f.books, f.err
	case <-ctx.Done():
		return nil, ctx.Err()
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
		delete(s.flights, shelf) // the mistake: the books leave with the flight
		s.mu.Unlock()
		close(f.done)
	}()
	f.books, f.err = s.db.Top(ctx, shelf)
	returned = true
}
