// Package unlockfirst is a known-wrong answer to case 3: two looks and a
// lock per shelf, but the fetcher lets go of the shelf's lock before it
// fills the cache. A waiter that takes the lock in that gap makes its second
// look at a cache that is still empty, and queries again.
//
// Verdict: may fail "once", "one-round" and "two-shelves": the gap is a few instructions
// long, and whether a waiter gets the lock inside it depends on the
// schedule.
package unlockfirst

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

func (s *Shop) fetch(ctx context.Context, shelf string) ([]string, bool, error) {
	l := s.lockFor(shelf)
	l.Lock()
	defer l.Unlock()
	if b, ok := s.cached(shelf); ok {
		return b, true, nil
	}
	b, err := s.db.Top(ctx, shelf)
	return b, false, err
}

func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	if b, ok := s.cached(shelf); ok {
		return b, nil
	}
	b, hit, err := s.fetch(ctx, shelf)
	if err != nil || hit {
		return b, err
	}
	s.mu.Lock() // the shelf's lock is already released here
	s.cache[shelf] = b
	s.mu.Unlock()
	return b, nil
}
