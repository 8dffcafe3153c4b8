// Package trylockpoll is a known-wrong answer to case 3: a waiter that
// cannot get the shelf's lock polls TryLock every 5 ms, looking at the
// cache between tries, and after 120 ms decides the fetcher is stuck and
// queries the database without the lock. The story's query takes 0.2 s:
// every waiter queries.
//
// Verdict: fails "once".
package trylockpoll

import (
	"context"
	"sync"
	"time"

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

func (s *Shop) lock(shelf string) *sync.Mutex {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.locks[shelf]
	if !ok {
		l = &sync.Mutex{}
		s.locks[shelf] = l
	}
	return l
}

func (s *Shop) fill(ctx context.Context, shelf string) ([]string, error) {
	b, err := s.db.Top(ctx, shelf)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.cache[shelf] = b
	s.mu.Unlock()
	return b, nil
}

func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	if b, ok := s.cached(shelf); ok {
		return b, nil
	}
	l := s.lock(shelf)
	for tries := 0; tries < 24; tries++ {
		if l.TryLock() {
			defer l.Unlock()
			if b, ok := s.cached(shelf); ok {
				return b, nil
			}
			return s.fill(ctx, shelf)
		}
		if b, ok := s.cached(shelf); ok {
			return b, nil
		}
		time.Sleep(5 * time.Millisecond)
	}
	// the fetcher seems stuck: fetch it ourselves
	return s.fill(ctx, shelf)
}
