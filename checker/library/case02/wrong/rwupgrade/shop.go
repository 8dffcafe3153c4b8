// Package rwupgrade is a known-wrong answer to case 2: the table of
// per-shelf locks sits behind a sync.RWMutex, looked up under the read lock
// and, on a miss, created under the write lock without looking again. Two
// visitors can miss under the read lock together, and each stores a lock of
// its own. Every access holds the mutex, so there is no data race.
//
// Verdict: may fail "same-lock", "two-shelves" and "once", depending on whether two
// visitors reach the table at the same moment in a run.
package rwupgrade

import (
	"context"
	"sync"

	"stampede/shop/catalog"
)

type Shop struct {
	db    *catalog.DB
	mu    sync.RWMutex
	cache map[string][]string
	locks map[string]*sync.Mutex
}

func New(db *catalog.DB) *Shop {
	return &Shop{db: db, cache: map[string][]string{}, locks: map[string]*sync.Mutex{}}
}

func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	s.mu.RLock()
	b, hit := s.cache[shelf]
	l := s.locks[shelf]
	s.mu.RUnlock()
	if hit {
		return b, nil
	}
	if l == nil {
		s.mu.Lock()
		l = new(sync.Mutex) // should have looked again: another visitor may be here too
		s.locks[shelf] = l
		s.mu.Unlock()
	}

	l.Lock()
	defer l.Unlock()
	s.mu.RLock()
	b, hit = s.cache[shelf]
	s.mu.RUnlock()
	if hit {
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
