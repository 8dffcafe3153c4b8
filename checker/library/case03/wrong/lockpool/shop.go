// Package lockpool is a known-wrong answer to case 3: the second look is
// right, and the locks come from a small fixed pool, shared round-robin by
// the order in which shelves are first asked for. The fifth shelf gets the
// first shelf's lock back: the two wait for each other's queries.
//
// Verdict: fails "apart".
package lockpool

import (
	"context"
	"sync"

	"stampede/shop/catalog"
)

const poolSize = 4

type Shop struct {
	db    *catalog.DB
	mu    sync.Mutex
	cache map[string][]string
	pool  [poolSize]sync.Mutex
	slot  map[string]int
}

func New(db *catalog.DB) *Shop {
	return &Shop{db: db, cache: map[string][]string{}, slot: map[string]int{}}
}

func (s *Shop) lockFor(shelf string) *sync.Mutex {
	s.mu.Lock()
	defer s.mu.Unlock()
	i, ok := s.slot[shelf]
	if !ok {
		i = len(s.slot) % poolSize
		s.slot[shelf] = i
	}
	return &s.pool[i]
}

func (s *Shop) cached(shelf string) ([]string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.cache[shelf]
	return b, ok
}

func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	if b, ok := s.cached(shelf); ok {
		return b, nil
	}
	l := s.lockFor(shelf)
	l.Lock()
	defer l.Unlock()
	if b, ok := s.cached(shelf); ok {
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
