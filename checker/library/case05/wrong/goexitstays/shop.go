// Package goexitstays is a known-wrong answer to case 5: a table of
// flights that lands a flight on two paths, with the query's answer after
// the call and with the panic's error in a deferred recover. A
// runtime.Goexit takes neither: recover returns nil, and the line after
// the call never runs. The flight stays in the table, its channel never
// closed. Its waiters leave by their deadlines, but every visitor after
// them joins the dead flight, and the shelf is gone for good.
package goexitstays

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
	defer func() {
		if r := recover(); r != nil {
			s.land(shelf, f, nil, fmt.Errorf("shop: %s: the query panicked: %v", shelf, r))
		}
	}()
	books, err := s.db.Top(ctx, shelf)
	if err != nil {
		err = fmt.Errorf("shop: %s: %w", shelf, err)
	}
	s.land(shelf, f, books, err)
}

// land hands the flight's outcome to its waiters, keeps a success, and
// takes the flight off the table.
func (s *Shop) land(shelf string, f *flight, books []string, err error) {
	s.mu.Lock()
	f.books, f.err = books, err
	if err == nil {
		s.cache[shelf] = books
	}
	delete(s.flights, shelf)
	s.mu.Unlock()
	close(f.done)
}
