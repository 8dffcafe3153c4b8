// Package panicstays is a known-wrong answer to case 5: the panic is
// recovered and the waiters are released, but the flight is removed from
// the table only on the normal path. After one panic the shelf's flight
// stays there, landed, with the panic's error: every later visitor joins
// it and gets that error, for good.
//
// Verdict: fails "panic" (the shelf is dead once the database is back).
package panicstays

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
	f, ok := s.flights[shelf]
	if !ok {
		f = &flight{done: make(chan struct{})}
		s.flights[shelf] = f
		go s.fetch(context.WithoutCancel(ctx), shelf, f)
	}
	s.mu.Unlock()
	select {
	case <-f.done:
		return f.books, f.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (s *Shop) fetch(ctx context.Context, shelf string, f *flight) {
	defer func() {
		if r := recover(); r != nil {
			f.err = fmt.Errorf("fetching %s: %v", shelf, r)
		}
		close(f.done)
	}()
	books, err := s.db.Top(ctx, shelf)
	s.mu.Lock()
	f.books, f.err = books, err
	if err == nil {
		s.cache[shelf] = books
	}
	delete(s.flights, shelf)
	s.mu.Unlock()
}
