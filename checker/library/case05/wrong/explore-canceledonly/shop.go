// Package explorecanceledonly is a known-wrong answer to case 5, right in
// every way but one: a waiter who stops waiting returns context.Canceled,
// the error the give-up check expects, instead of its context's own error.
// A visitor whose deadline passed gets told it cancelled, and a caller who
// tells "too slow" from "gone" by the error (errors.Is(err,
// context.DeadlineExceeded)) tells wrong.
//
// The checks cancel contexts and never let a deadline pass. Verdict: fails
// "explore", with a visitor whose deadline passes while it waits.
package explorecanceledonly

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
		return nil, context.Canceled // the mistake: not always why ctx ended
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
		delete(s.flights, shelf)
		s.mu.Unlock()
		close(f.done)
	}()
	f.books, f.err = s.db.Top(ctx, shelf)
	returned = true
}
