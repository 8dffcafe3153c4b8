// Package goexitnilnil is a known-wrong answer to case 5: a table of
// flights that tells a Goexit from a return, with a flag set after the
// query, and keeps it out of the cache. But the Goexit branch only takes
// the flight off the table and wakes its waiters; it sets no error, so
// each of them returns no books and a nil error, as if the shelf were
// empty.
package goexitnilnil

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
	defer func() {
		r := recover()
		s.mu.Lock()
		switch {
		case r != nil:
			f.books, f.err = nil, fmt.Errorf("shop: %s: the query panicked: %v", shelf, r)
		case !returned:
			// Goexit: nothing to keep.
		case f.err == nil:
			s.cache[shelf] = f.books
		}
		delete(s.flights, shelf)
		s.mu.Unlock()
		close(f.done)
	}()
	f.books, f.err = s.db.Top(ctx, shelf)
	if f.err != nil {
		f.err = fmt.Errorf("shop: %s: %w", shelf, f.err)
	}
	returned = true
}
