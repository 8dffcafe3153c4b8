// Package casspin is a known-wrong answer to case 4: a spin lock made of
// a compare-and-swap, "lighter than a mutex". Every look takes it alone,
// yielding while another goroutine holds it, so hits wait for each other,
// and no profile of locks or channels ever records the wait.
//
// Verdict: fails "hits-shared" (hits seen spinning in runtime.Gosched).
package casspin

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"

	"stampede/shop/catalog"
)

type spin struct{ held atomic.Bool }

func (l *spin) lock() {
	for !l.held.CompareAndSwap(false, true) {
		runtime.Gosched()
	}
}

func (l *spin) unlock() { l.held.Store(false) }

type Shop struct {
	db    *catalog.DB
	guard spin
	cache map[string][]string

	locksMu sync.Mutex
	locks   map[string]*sync.Mutex
}

func New(db *catalog.DB) *Shop {
	return &Shop{db: db, cache: map[string][]string{}, locks: map[string]*sync.Mutex{}}
}

func (s *Shop) look(shelf string) ([]string, bool) {
	s.guard.lock()
	defer s.guard.unlock()
	b, ok := s.cache[shelf]
	return b, ok
}

func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	if b, ok := s.look(shelf); ok {
		return b, nil
	}
	s.locksMu.Lock()
	l, ok := s.locks[shelf]
	if !ok {
		l = new(sync.Mutex)
		s.locks[shelf] = l
	}
	s.locksMu.Unlock()
	l.Lock()
	defer l.Unlock()
	if b, ok := s.look(shelf); ok {
		return b, nil
	}
	b, err := s.db.Top(ctx, shelf)
	if err != nil {
		return nil, err
	}
	s.guard.lock()
	s.cache[shelf] = b
	s.guard.unlock()
	return b, nil
}
