// Package cow is a known-right answer to case 1: the cache is a map that
// is never written once published, behind an atomic.Pointer. A hit is one
// atomic load. A fill copies the map, adds its shelf, and swaps the copy
// in under the mutex that also guards the flights, so two fills cannot
// lose each other's shelf.
//
// Verdict: passes every check.
package cow

import (
	"context"
	"maps"
	"sync"
	"sync/atomic"

	"stampede/shop/catalog"
)

type flight struct {
	done  chan struct{}
	books []string
	err   error
}

type Shop struct {
	db      *catalog.DB
	cache   atomic.Pointer[map[string][]string]
	mu      sync.Mutex
	flights map[string]*flight
}

func New(db *catalog.DB) *Shop {
	s := &Shop{db: db, flights: map[string]*flight{}}
	s.cache.Store(&map[string][]string{})
	return s
}

func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	if b, ok := (*s.cache.Load())[shelf]; ok {
		return b, nil
	}
	s.mu.Lock()
	if b, ok := (*s.cache.Load())[shelf]; ok {
		s.mu.Unlock()
		return b, nil
	}
	f, joined := s.flights[shelf]
	if !joined {
		f = &flight{done: make(chan struct{})}
		s.flights[shelf] = f
	}
	s.mu.Unlock()
	if joined {
		<-f.done
		return f.books, f.err
	}

	f.books, f.err = s.db.Top(ctx, shelf)
	s.mu.Lock()
	if f.err == nil {
		next := maps.Clone(*s.cache.Load())
		next[shelf] = f.books
		s.cache.Store(&next)
	}
	delete(s.flights, shelf)
	s.mu.Unlock()
	close(f.done)
	return f.books, f.err
}
