// Package wrapv is a known-wrong answer to case 5: the waiters get a
// friendlier error, built with %v. The text still says what the database
// said, but the error is a new one: errors.Is and errors.As no longer find
// the database's error behind it.
//
// Verdict: fails "shared-error".
package wrapv

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

type Shop struct {
	db      *catalog.DB
	mu      sync.Mutex
	cache   map[string][]string
	flights map[string]*flight
}

func New(db *catalog.DB) *Shop {
	return &Shop{db: db, cache: map[string][]string{}, flights: map[string]*flight{}}
}

func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	s.mu.Lock()
	if b, ok := s.cache[shelf]; ok {
		s.mu.Unlock()
		return b, nil
	}
	if f, ok := s.flights[shelf]; ok {
		s.mu.Unlock()
		select {
		case <-f.done:
			if f.err != nil {
				return nil, fmt.Errorf("%s unavailable: %v", shelf, f.err)
			}
			return f.books, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	f := &flight{done: make(chan struct{})}
	s.flights[shelf] = f
	s.mu.Unlock()
	s.fly(context.WithoutCancel(ctx), shelf, f)
	return f.books, f.err
}

// fly runs the query and lands the flight.
func (s *Shop) fly(ctx context.Context, shelf string, f *flight) {
	defer func() {
		if r := recover(); r != nil {
			f.books, f.err = nil, fmt.Errorf("panic: %v", r)
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
}
