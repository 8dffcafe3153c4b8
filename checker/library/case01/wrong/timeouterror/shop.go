// Package timeouterror is a known-wrong answer to case 1: a per-shelf
// lock taken with a deadline. A waiter polls TryLock every 5 ms, and after
// 150 ms it gives up with an error, so that no visitor "hangs". The
// story's query takes 0.2 s: every waiter gets the error.
//
// Verdict: fails "served" (the waiters' error).
package timeouterror

import (
	"context"
	"errors"
	"sync"
	"time"

	"stampede/shop/catalog"
)

var errBusy = errors.New("shelf is busy, try again")

type Shop struct {
	db    *catalog.DB
	mu    sync.RWMutex
	cache map[string][]string
	locks map[string]*sync.Mutex
}

func New(db *catalog.DB) *Shop {
	return &Shop{db: db, cache: map[string][]string{}, locks: map[string]*sync.Mutex{}}
}

func (s *Shop) lookup(shelf string) ([]string, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	b, ok := s.cache[shelf]
	return b, ok
}

func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	if b, ok := s.lookup(shelf); ok {
		return b, nil
	}
	s.mu.Lock()
	l, ok := s.locks[shelf]
	if !ok {
		l = &sync.Mutex{}
		s.locks[shelf] = l
	}
	s.mu.Unlock()

	deadline := time.Now().Add(150 * time.Millisecond)
	for !l.TryLock() {
		if time.Now().After(deadline) {
			return nil, errBusy
		}
		time.Sleep(5 * time.Millisecond)
	}
	defer l.Unlock()
	if b, ok := s.lookup(shelf); ok {
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
