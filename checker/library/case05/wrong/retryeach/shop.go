// Package retryeach is a known-wrong answer to case 5: a per-shelf lock
// that a waiter can give up on (a channel of one slot), a query that
// outlives its starter, cleanup by defer, and a second look at the cache,
// but nothing to tell a waiter that the query it waited for has failed. So
// each waiter queries again when its turn comes.
//
// Verdict: fails "shared-error".
package retryeach

import (
	"context"
	"fmt"
	"sync"

	"stampede/shop/catalog"
)

type Shop struct {
	db    *catalog.DB
	mu    sync.RWMutex
	cache map[string][]string
	turns map[string]chan struct{}
}

func New(db *catalog.DB) *Shop {
	return &Shop{db: db, cache: map[string][]string{}, turns: map[string]chan struct{}{}}
}

func (s *Shop) cached(shelf string) ([]string, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	b, ok := s.cache[shelf]
	return b, ok
}

func (s *Shop) Top(ctx context.Context, shelf string) (books []string, err error) {
	if b, ok := s.cached(shelf); ok {
		return b, nil
	}
	s.mu.Lock()
	turn := s.turns[shelf]
	if turn == nil {
		turn = make(chan struct{}, 1)
		s.turns[shelf] = turn
	}
	s.mu.Unlock()

	select {
	case turn <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-turn }()
	if b, ok := s.cached(shelf); ok {
		return b, nil
	}
	defer func() {
		if r := recover(); r != nil {
			books, err = nil, fmt.Errorf("query %s panicked: %v", shelf, r)
		}
	}()
	b, err := s.db.Top(context.WithoutCancel(ctx), shelf)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.cache[shelf] = b
	s.mu.Unlock()
	return b, nil
}
