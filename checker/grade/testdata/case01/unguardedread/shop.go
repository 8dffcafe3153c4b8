// Package unguardedread is a known-wrong answer to case 1: the textbook's
// fast path translated word for word. Both looks read the cache map without
// holding its lock, as a language with a global interpreter lock lets you;
// in Go that is a data race, and under load a fatal "concurrent map read
// and map write".
//
// Verdict: fails "race".
package unguardedread

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

func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	if books, ok := s.cache[shelf]; ok { // no lock: a race with the write below
		return books, nil
	}
	s.mu.Lock()
	l := s.locks[shelf]
	if l == nil {
		l = new(sync.Mutex)
		s.locks[shelf] = l
	}
	s.mu.Unlock()

	l.Lock()
	defer l.Unlock()
	if books, ok := s.cache[shelf]; ok {
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
