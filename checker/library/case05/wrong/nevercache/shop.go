// Package nevercache is a known-wrong answer to case 5: every failure
// path is right, and the success path forgets the cache. The student
// removed the cache while making sure no failure is kept in it, and kept
// only the flights: each burst makes one query, and so does every visitor
// who comes after it.
//
// Verdict: fails "once", "two-shelves", "not-cached", "panic", "give-up"
// and "starter-gives-up" (the visitors after the burst query again).
package nevercache

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
	flights map[string]*flight
}

func New(db *catalog.DB) *Shop { return &Shop{db: db, flights: map[string]*flight{}} }

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
	defer func() {
		if r := recover(); r != nil {
			f.books, f.err = nil, fmt.Errorf("panic: %v", r)
		}
		s.mu.Lock()
		delete(s.flights, shelf)
		s.mu.Unlock()
		close(f.done)
	}()
	f.books, f.err = s.db.Top(ctx, shelf)
}
