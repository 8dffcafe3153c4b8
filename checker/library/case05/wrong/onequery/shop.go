// Package onequery is a known-wrong answer to case 5: every failure path
// is right, and the student adds a mutex around the query "so that the
// database, which just fell over, never gets more than one query at a
// time". Each shelf has its own flight, but the flights take turns: a
// visitor for one shelf waits for any other shelf's slow query.
//
// Verdict: fails "apart".
package onequery

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
	dbMu    sync.Mutex // one query at a time
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
	defer func() {
		if r := recover(); r != nil {
			f.books, f.err = nil, fmt.Errorf("query %s panicked: %v", shelf, r)
		}
		s.mu.Lock()
		if f.err == nil {
			s.cache[shelf] = f.books
		}
		delete(s.flights, shelf)
		s.mu.Unlock()
		close(f.done)
	}()
	s.dbMu.Lock()
	defer s.dbMu.Unlock()
	f.books, f.err = s.db.Top(ctx, shelf)
}
