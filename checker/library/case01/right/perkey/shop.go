// Package perkey is a known-right answer to case 1, written differently
// from the reference: a plain sync.Mutex guards the cache and a table of
// per-shelf locks, and the second look happens under the shelf's lock.
//
// Verdict: passes every check.
package perkey

import (
	"context"
	"sync"

	"stampede/shop/catalog"
)

type entry struct {
	sync.Mutex
	books []string
	full  bool
}

type Shop struct {
	db      *catalog.DB
	mu      sync.Mutex
	entries map[string]*entry
}

func New(db *catalog.DB) *Shop { return &Shop{db: db, entries: map[string]*entry{}} }

func (s *Shop) entry(shelf string) *entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.entries[shelf]
	if e == nil {
		e = &entry{}
		s.entries[shelf] = e
	}
	return e
}

func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	e := s.entry(shelf)
	e.Lock()
	defer e.Unlock()
	if e.full {
		return e.books, nil
	}
	books, err := s.db.Top(ctx, shelf)
	if err != nil {
		return nil, err
	}
	e.books, e.full = books, true
	return books, nil
}
