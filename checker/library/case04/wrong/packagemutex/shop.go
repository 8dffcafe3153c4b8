// Package packagemutex is a known-wrong answer to case 4: the same mistake
// as mutexhits, a plain mutex on every hit, but the mutex is a package
// variable. The checker cannot reach it from the Shop to hold it, so only
// the second part of "hits-shared" can see it: hits hammered with the
// block profile on, caught when two of them collide.
//
// Verdict: fails "hits-shared" whenever two hits collided during the
// hammer, which was every one of 400 measured runs (GOMAXPROCS 1 and 2),
// but a collision cannot be made to happen; so the verdict is not held.
package packagemutex

import (
	"context"
	"sync"

	"stampede/shop/catalog"
)

var mu sync.Mutex // guards every Shop's cache and locks

type Shop struct {
	db    *catalog.DB
	cache map[string][]string
	locks map[string]*sync.Mutex
}

func New(db *catalog.DB) *Shop {
	return &Shop{db: db, cache: map[string][]string{}, locks: map[string]*sync.Mutex{}}
}

func (s *Shop) look(shelf string) ([]string, bool) {
	mu.Lock()
	defer mu.Unlock()
	b, ok := s.cache[shelf]
	return b, ok
}

func (s *Shop) lockFor(shelf string) *sync.Mutex {
	mu.Lock()
	defer mu.Unlock()
	l := s.locks[shelf]
	if l == nil {
		l = new(sync.Mutex)
		s.locks[shelf] = l
	}
	return l
}

func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	if b, ok := s.look(shelf); ok {
		return b, nil
	}
	l := s.lockFor(shelf)
	l.Lock()
	defer l.Unlock()
	if b, ok := s.look(shelf); ok {
		return b, nil
	}
	b, err := s.db.Top(ctx, shelf)
	if err != nil {
		return nil, err
	}
	mu.Lock()
	s.cache[shelf] = b
	mu.Unlock()
	return b, nil
}
