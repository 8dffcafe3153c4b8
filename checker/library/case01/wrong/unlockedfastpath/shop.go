// Package unlockedfastpath is a known-wrong answer to case 1, found by a
// student trying the lab: everything is locked but the first look. The
// fills and the second look take the shop's mutex, the lock table is
// guarded, and only the fast path reads the map bare. In Go that read races
// with every fill of another shelf.
//
// Verdict: fails "race".
package unlockedfastpath

import (
	"context"
	"sync"

	"stampede/shop/catalog"
)

type Shop struct {
	db    *catalog.DB
	mu    sync.Mutex
	cache map[string][]string
	locks map[string]*sync.Mutex
}

func New(db *catalog.DB) *Shop {
	return &Shop{db: db, cache: map[string][]string{}, locks: map[string]*sync.Mutex{}}
}

func (s *Shop) lockFor(shelf string) *sync.Mutex {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.locks[shelf]
	if !ok {
		l = new(sync.Mutex)
		s.locks[shelf] = l
	}
	return l
}

func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	books, ok := s.cache[shelf] // fast path, no lock
	if ok {
		return books, nil
	}
	l := s.lockFor(shelf)
	l.Lock()
	defer l.Unlock()
	s.mu.Lock()
	books, ok = s.cache[shelf]
	s.mu.Unlock()
	if ok {
		return books, nil
	}
	books, err := s.db.Top(ctx, shelf)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.cache[shelf] = books
	s.mu.Unlock()
	return books, nil
}
