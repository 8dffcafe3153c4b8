// Package refcount is a known-right answer to case 2: a table of locks
// that does not grow for ever. Each entry counts the visitors who hold or
// wait for it; the last one out removes it. Taking a reference and
// releasing it both happen under the table's mutex, so a visitor never
// locks an entry that has already been removed.
//
// Verdict: passes every check.
package refcount

import (
	"context"
	"sync"

	"stampede/shop/catalog"
)

type entry struct {
	mu   sync.Mutex
	refs int // guarded by Shop.mu
}

type Shop struct {
	db    *catalog.DB
	mu    sync.Mutex
	cache map[string][]string
	locks map[string]*entry
}

func New(db *catalog.DB) *Shop {
	return &Shop{db: db, cache: map[string][]string{}, locks: map[string]*entry{}}
}

func (s *Shop) acquire(shelf string) *entry {
	s.mu.Lock()
	e := s.locks[shelf]
	if e == nil {
		e = &entry{}
		s.locks[shelf] = e
	}
	e.refs++
	s.mu.Unlock()
	e.mu.Lock()
	return e
}

func (s *Shop) release(shelf string, e *entry) {
	e.mu.Unlock()
	s.mu.Lock()
	e.refs--
	if e.refs == 0 {
		delete(s.locks, shelf)
	}
	s.mu.Unlock()
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
	e := s.acquire(shelf)
	defer s.release(shelf, e)
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
