// Package lookbeforelock is a known-wrong answer to case 3: it adds the
// second look, but puts it just before taking the shelf's lock instead of
// just after. The look happens before the wait, so it still sees the empty
// cache, and the waiters query one after another as before.
//
// Verdict: fails "once" and "one-round".
package lookbeforelock

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

func (s *Shop) cached(shelf string) ([]string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.cache[shelf]
	return b, ok
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
	if b, ok := s.cached(shelf); ok {
		return b, nil
	}
	l := s.lockFor(shelf)
	if b, ok := s.cached(shelf); ok { // the second look, but before the wait
		return b, nil
	}
	l.Lock()
	defer l.Unlock()
	b, err := s.db.Top(ctx, shelf)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.cache[shelf] = b
	s.mu.Unlock()
	return b, nil
}
