// Package breaker is a known-wrong answer to case 5: a circuit breaker in
// front of the database. After two failures in a row the shop stops
// asking and answers "temporarily unavailable" at once. It closes again
// on a success, but while it is open nothing is ever asked, so no success
// comes: once open, it stays open.
//
// Verdict: fails "not-cached".
package breaker

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"stampede/shop/catalog"
)

var errOpen = errors.New("bestsellers temporarily unavailable")

const trip = 2

type flight struct {
	done  chan struct{}
	books []string
	err   error
}

type Shop struct {
	db       *catalog.DB
	mu       sync.Mutex
	cache    map[string][]string
	flights  map[string]*flight
	failures int
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
	if s.failures >= trip {
		s.mu.Unlock()
		return nil, errOpen
	}
	f, ok := s.flights[shelf]
	if ok {
		s.mu.Unlock()
		select {
		case <-f.done:
			return f.books, f.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	f = &flight{done: make(chan struct{})}
	s.flights[shelf] = f
	s.mu.Unlock()
	s.fly(ctx, shelf, f)
	return f.books, f.err
}

// fly runs the query, counts a failure or resets the count, and lands the
// flight.
func (s *Shop) fly(ctx context.Context, shelf string, f *flight) {
	defer func() {
		if r := recover(); r != nil {
			f.books, f.err = nil, fmt.Errorf("query %s panicked: %v", shelf, r)
		}
		s.mu.Lock()
		if f.err == nil {
			s.cache[shelf] = f.books
			s.failures = 0
		} else {
			s.failures++
		}
		delete(s.flights, shelf)
		s.mu.Unlock()
		close(f.done)
	}()
	f.books, f.err = s.db.Top(context.WithoutCancel(ctx), shelf)
}
