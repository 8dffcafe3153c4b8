// Package goexitrepanic is a known-wrong answer to case 5: a table of
// flights landed in a deferred function that tells a Goexit from a return
// with a flag. To make a Goexit "as loud as a panic", the student panics
// in that branch, after landing the flight with an error. But the flight
// runs on a goroutine of its own: nobody recovers that panic, and it stops
// the whole program, as DoChan's re-panic does.
package goexitrepanic

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
		switch {
		case r != nil:
			f.books, f.err = nil, fmt.Errorf("shop: %s: the query panicked: %v", shelf, r)
		case !returned:
			f.books, f.err = nil, fmt.Errorf("shop: %s: the query ended its goroutine", shelf)
		}
		s.mu.Lock()
		if f.err == nil {
			s.cache[shelf] = f.books
		}
		delete(s.flights, shelf)
		s.mu.Unlock()
		close(f.done)
		if r == nil && !returned {
			panic(f.err) // a Goexit is a bug in the database: say so loudly
		}
	}()
	f.books, f.err = s.db.Top(ctx, shelf)
	if f.err != nil {
		f.err = fmt.Errorf("shop: %s: %w", shelf, f.err)
	}
	returned = true
}
