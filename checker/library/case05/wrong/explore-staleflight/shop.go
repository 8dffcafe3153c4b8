// Package explorestaleflight is a known-wrong answer to case 5: the flight
// lands by itself, but only the visitor who started it takes it off the
// table, once it has the outcome. If that visitor gave up before the
// query ended, nobody does: a failed flight stays on the table, and every
// visitor after it joins a flight that has already failed and gets its
// old error. The failure is cached by accident.
//
// In the not-cached check the starter stays, and in the give-up checks
// the query works. Verdict: fails "explore", with a starter who gives up
// before its query fails, and a visitor after it.
package explorestaleflight

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
	}
	s.mu.Unlock()
	select {
	case <-f.done:
		if !joined { // the starter clears the table; the mistake: only if it stayed
			s.mu.Lock()
			delete(s.flights, shelf)
			s.mu.Unlock()
		}
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
		if f.err == nil {
			s.cache[shelf] = f.books
		}
		s.mu.Unlock()
		close(f.done)
	}()
	f.books, f.err = s.db.Top(ctx, shelf)
	returned = true
}
