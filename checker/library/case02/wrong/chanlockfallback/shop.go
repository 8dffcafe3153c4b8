// Package chanlockfallback is a known-wrong answer to case 2: each shelf's
// lock is a channel with one slot, so that a visitor can wait for it with
// a timeout. A visitor who cannot get the lock within 100 ms assumes the
// holder is stuck and queries the database without it. The story's query
// takes 0.2 s: every waiter queries.
//
// Verdict: fails "once".
package chanlockfallback

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
	locks map[string]chan struct{}
}

func New(db *catalog.DB) *Shop {
	return &Shop{db: db, cache: map[string][]string{}, locks: map[string]chan struct{}{}}
}

func (s *Shop) lock(shelf string) chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.locks[shelf]
	if !ok {
		l = make(chan struct{}, 1)
		s.locks[shelf] = l
	}
	return l
}

func (s *Shop) cached(shelf string) ([]string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.cache[shelf]
	return b, ok
}

func (s *Shop) fetch(ctx context.Context, shelf string) ([]string, error) {
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
	select {
	case l <- struct{}{}:
		defer func() { <-l }()
		if b, ok := s.cached(shelf); ok {
			return b, nil
		}
		return s.fetch(ctx, shelf)
	case <-time.After(100 * time.Millisecond):
		return s.fetch(ctx, shelf)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
