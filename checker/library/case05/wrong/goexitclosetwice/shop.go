// Package goexitclosetwice is a known-wrong answer to case 5: a table of
// flights closed by a deferred close(f.done), landed by a deferred
// function that tells a panic, a Goexit and a return apart. Worried that
// the waiters of a query whose goroutine is gone might wait, the student
// closes the channel in the Goexit branch too, "to wake them now". Then
// the deferred close runs and closes it again: a panic while the goroutine
// exits, which nobody recovers, and the whole program stops.
package goexitclosetwice

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"stampede/shop/catalog"
)

var errExited = errors.New("the query ended its goroutine")

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
	if books, ok := s.cache[shelf]; ok {
		s.mu.Unlock()
		return books, nil
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
		return nil, ctx.Err()
	}
}

func (s *Shop) fly(ctx context.Context, shelf string, f *flight) {
	returned := false
	defer close(f.done)
	defer func() {
		r := recover()
		s.mu.Lock()
		defer s.mu.Unlock()
		delete(s.flights, shelf)
		switch {
		case r != nil:
			f.books, f.err = nil, fmt.Errorf("shop: %s: the query panicked: %v", shelf, r)
		case !returned:
			f.books, f.err = nil, fmt.Errorf("shop: %s: %w", shelf, errExited)
			close(f.done) // nobody returns from this query: wake its waiters now
		case f.err == nil:
			s.cache[shelf] = f.books
		}
	}()
	f.books, f.err = s.db.Top(ctx, shelf)
	if f.err != nil {
		f.err = fmt.Errorf("shop: %s: %w", shelf, f.err)
	}
	returned = true
}
