// Package unguardedsecondlook is a known-wrong answer to case 3: the second
// look is there, under the shelf's lock, but it reads the cache map without
// the mutex that guards it. The shelf's lock orders it after that shelf's
// own fill, but not after another shelf's: a data race.
//
// Verdict: fails "race".
package unguardedsecondlook

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
	s.mu.Lock()
	b, ok := s.cache[shelf]
	l := s.locks[shelf]
	if l == nil {
		l = new(sync.Mutex)
		s.locks[shelf] = l
	}
	s.mu.Unlock()
	if ok {
		return b, nil
	}
	l.Lock()
	defer l.Unlock()
	if b, ok := s.cache[shelf]; ok { // the shelf's lock is held, but not s.mu
		return b, nil
	}
	b, err := s.db.Top(ctx, shelf)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.cache[shelf] = b
	s.mu.Unlock()
	return b, nil
}
