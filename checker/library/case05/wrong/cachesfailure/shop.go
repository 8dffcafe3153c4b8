// Package cachesfailure is a known-wrong answer to case 5: a flight table
// that gets everything else right, and keeps each flight's outcome in the
// cache, error included. Once the query has failed, every later visitor
// gets the same error from the cache, long after the database is back.
//
// Verdict: fails "not-cached", and "goexit" too: a Goexit lands as a
// success with an empty list.
package cachesfailure

import (
	"context"
	"fmt"
	"sync"

	"stampede/shop/catalog"
)

type result struct {
	books []string
	err   error
}

type flight struct {
	done chan struct{}
	result
}

type Shop struct {
	db      *catalog.DB
	mu      sync.RWMutex
	cache   map[string]result
	flights map[string]*flight
}

func New(db *catalog.DB) *Shop {
	return &Shop{db: db, cache: map[string]result{}, flights: map[string]*flight{}}
}

func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	s.mu.RLock()
	r, ok := s.cache[shelf]
	s.mu.RUnlock()
	if ok {
		return r.books, r.err
	}
	s.mu.Lock()
	if r, ok := s.cache[shelf]; ok {
		s.mu.Unlock()
		return r.books, r.err
	}
	f := s.flights[shelf]
	if f == nil {
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
		s.cache[shelf] = f.result // the error too: "we asked, this is the answer"
		delete(s.flights, shelf)
		s.mu.Unlock()
		close(f.done)
	}()
	f.books, f.err = s.db.Top(ctx, shelf)
}
