// Package mutexhits is a known-wrong answer to case 4: the race fixed with
// the plain sync.Mutex the shop already had. Both looks take it, so the
// map is safe, but every hit now waits for every other hit.
//
// Verdict: fails "hits-shared".
package mutexhits

import (
	"context"
	"sync"

	"stampede/shop/catalog"
)

type Shop struct {
	db    *catalog.DB
	mu    sync.Mutex // guards locks and cache
	locks map[string]*sync.Mutex
	cache map[string][]string
}

func New(db *catalog.DB) *Shop {
	return &Shop{db: db, locks: map[string]*sync.Mutex{}, cache: map[string][]string{}}
}

func (s *Shop) look(shelf string) ([]string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.cache[shelf]
	return b, ok
}

func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	if b, ok := s.look(shelf); ok {
		return b, nil
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
	if b, ok := s.look(shelf); ok {
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
