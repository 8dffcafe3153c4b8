// Package ctxkey is a known-wrong answer to case 1: flights keyed by the
// request. The student keys the table by context and shelf, "so that one
// request's cancellation cannot affect another's". Every visitor has a
// context of its own, so every visitor has a flight of its own: the
// stampede, with extra bookkeeping.
//
// Verdict: fails "once" and "two-shelves".
package ctxkey

import (
	"context"
	"sync"

	"stampede/shop/catalog"
)

type key struct {
	ctx   context.Context
	shelf string
}

type call struct {
	done  chan struct{}
	books []string
	err   error
}

type Shop struct {
	db    *catalog.DB
	mu    sync.Mutex
	cache map[string][]string
	calls map[key]*call
}

func New(db *catalog.DB) *Shop {
	return &Shop{db: db, cache: map[string][]string{}, calls: map[key]*call{}}
}

func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	k := key{ctx, shelf}
	s.mu.Lock()
	if b, ok := s.cache[shelf]; ok {
		s.mu.Unlock()
		return b, nil
	}
	if c, ok := s.calls[k]; ok {
		s.mu.Unlock()
		<-c.done
		return c.books, c.err
	}
	c := &call{done: make(chan struct{})}
	s.calls[k] = c
	s.mu.Unlock()

	c.books, c.err = s.db.Top(ctx, shelf)
	s.mu.Lock()
	if c.err == nil {
		s.cache[shelf] = c.books
	}
	delete(s.calls, k)
	s.mu.Unlock()
	close(c.done)
	return c.books, c.err
}
