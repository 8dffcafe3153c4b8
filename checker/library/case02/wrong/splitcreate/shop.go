// Package splitcreate is a known-wrong answer to case 2: a lock per shelf
// and a guarded table of locks, but the table is read in one critical
// section and written in another. Two visitors can both find no lock, make
// one each, and both query. There is no data race: every access to the map
// holds the mutex.
//
// Verdict: may fail "same-lock", "two-shelves" and "once". The two locks appear
// only when two visitors reach the table within the same few hundred
// nanoseconds, so whether a run sees it depends on the schedule.
package splitcreate

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
	l, ok := s.locks[shelf]
	s.mu.Unlock()
	if ok {
		return l
	}
	l = new(sync.Mutex)
	s.mu.Lock()
	s.locks[shelf] = l // another visitor may have stored its own lock since we looked
	s.mu.Unlock()
	return l
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
