// Package waitersignorectx is a known-wrong answer to case 5: a flight
// table with a done channel, landed by defer and run on a context that
// outlives its starter, but whose waiters receive from the channel and
// nothing else. A visitor who gives up keeps waiting until the query ends.
//
// Verdict: fails "give-up", and "goexit" too: its recover takes a Goexit
// for a return, and caches an empty list.
package waitersignorectx

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
	if f, ok := s.flights[shelf]; ok {
		s.mu.Unlock()
		<-f.done // deaf to ctx
		return f.books, f.err
	}
	f := &flight{done: make(chan struct{})}
	s.flights[shelf] = f
	s.mu.Unlock()
	s.fly(context.WithoutCancel(ctx), shelf, f)
	return f.books, f.err
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
	f.books, f.err = s.db.Top(ctx, shelf)
}
