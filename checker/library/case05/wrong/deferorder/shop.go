// Package deferorder is a known-wrong answer to case 5: a flight run on a
// goroutine of its own, landed by defer, with a deferred recover, but the
// two defers are in the wrong order. Deferred calls run last in, first
// out, so the flight lands (done closed, the waiters woken) before the
// recover has written the panic's error into it: the waiters read the
// error while it is being written.
//
// Verdict: fails "race". Whether a waiter reads the flight before the
// error is written depends on the schedule, so "panic" may fail too.
// It fails "goexit" as well: recover cannot tell a Goexit from a return.
package deferorder

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
	mu      sync.RWMutex
	cache   map[string][]string
	flights map[string]*flight
}

func New(db *catalog.DB) *Shop {
	return &Shop{db: db, cache: map[string][]string{}, flights: map[string]*flight{}}
}

func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	s.mu.RLock()
	b, ok := s.cache[shelf]
	s.mu.RUnlock()
	if ok {
		return b, nil
	}
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
			f.err = fmt.Errorf("query %s panicked: %v", shelf, r) // too late: done is closed
		}
	}()
	defer s.land(shelf, f)
	f.books, f.err = s.db.Top(ctx, shelf)
}

func (s *Shop) land(shelf string, f *flight) {
	s.mu.Lock()
	if f.err == nil && f.books != nil {
		s.cache[shelf] = f.books
	}
	delete(s.flights, shelf)
	s.mu.Unlock()
	close(f.done)
}
