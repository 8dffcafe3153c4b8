// Package lenkey is a known-wrong answer to case 5: the table of flights
// is a slice indexed by the length of the shelf's name, "faster than a
// map". Bestsellers and staff picks are both eleven letters long: a
// visitor for one joins the other's flight and gets its list.
//
// Verdict: fails "two-shelves" and "apart" (a staff-picks visitor waits
// on the bestseller flight).
package lenkey

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
	flights [32]*flight
}

func New(db *catalog.DB) *Shop { return &Shop{db: db, cache: map[string][]string{}} }

func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	i := len(shelf) % len(s.flights)
	s.mu.Lock()
	if b, ok := s.cache[shelf]; ok {
		s.mu.Unlock()
		return b, nil
	}
	f := s.flights[i]
	if f == nil {
		f = &flight{done: make(chan struct{})}
		s.flights[i] = f
		go s.fly(context.WithoutCancel(ctx), shelf, i, f)
	}
	s.mu.Unlock()
	select {
	case <-f.done:
		return f.books, f.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (s *Shop) fly(ctx context.Context, shelf string, i int, f *flight) {
	defer func() {
		if r := recover(); r != nil {
			f.books, f.err = nil, fmt.Errorf("panic: %v", r)
		}
		s.mu.Lock()
		if f.err == nil {
			s.cache[shelf] = f.books
		}
		s.flights[i] = nil
		s.mu.Unlock()
		close(f.done)
	}()
	f.books, f.err = s.db.Top(ctx, shelf)
}
