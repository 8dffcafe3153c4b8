// Package hashflights is a known-wrong answer to case 1: a fixed array of
// flight slots, picked by a hash of the shelf's name, to avoid a map. Two
// shelves whose hashes meet modulo the table's size share a slot: a
// visitor for one waits on the other's flight and gets its list.
//
// Verdict: fails "two-shelves" (sixteen shelves in eight slots) and
// "apart" (a visitor waits on another shelf's flight).
package hashflights

import (
	"context"
	"hash/fnv"
	"sync"

	"stampede/shop/catalog"
)

const slots = 8

type flight struct {
	done  chan struct{}
	books []string
	err   error
}

type Shop struct {
	db      *catalog.DB
	mu      sync.Mutex
	cache   map[string][]string
	flights [slots]*flight
}

func New(db *catalog.DB) *Shop { return &Shop{db: db, cache: map[string][]string{}} }

func slot(shelf string) int {
	h := fnv.New32a()
	h.Write([]byte(shelf))
	return int(h.Sum32() % slots)
}

func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	i := slot(shelf)
	s.mu.Lock()
	if b, ok := s.cache[shelf]; ok {
		s.mu.Unlock()
		return b, nil
	}
	if f := s.flights[i]; f != nil {
		s.mu.Unlock()
		<-f.done
		return f.books, f.err
	}
	f := &flight{done: make(chan struct{})}
	s.flights[i] = f
	s.mu.Unlock()

	f.books, f.err = s.db.Top(ctx, shelf)
	s.mu.Lock()
	if f.err == nil {
		s.cache[shelf] = f.books
	}
	s.flights[i] = nil
	s.mu.Unlock()
	close(f.done)
	return f.books, f.err
}
