// Package forgetflight is a known-right answer to case 5 that does by
// hand what x/sync/singleflight does: a flight tells a return, a panic and
// a runtime.Goexit apart with two flags. A return or a panic lands the
// flight, with its books or an error; a Goexit only takes the flight off
// the table, as singleflight forgets it, and answers nobody. Its waiters
// leave by their own contexts, as a server's deadline ends each request,
// and the next visitor starts a new query.
//
// Verdict: passes every check.
package forgetflight

import (
	"context"
	"fmt"
	"sync"

	"stampede/shop/catalog"
)

type call struct {
	done  chan struct{}
	books []string
	err   error
}

type Shop struct {
	db    *catalog.DB
	mu    sync.RWMutex
	cache map[string][]string
	calls map[string]*call
}

func New(db *catalog.DB) *Shop {
	return &Shop{db: db, cache: map[string][]string{}, calls: map[string]*call{}}
}

func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	s.mu.RLock()
	books, ok := s.cache[shelf]
	s.mu.RUnlock()
	if ok {
		return books, nil
	}
	s.mu.Lock()
	if books, ok := s.cache[shelf]; ok {
		s.mu.Unlock()
		return books, nil
	}
	c, ok := s.calls[shelf]
	if !ok {
		c = &call{done: make(chan struct{})}
		s.calls[shelf] = c
		go s.run(context.WithoutCancel(ctx), shelf, c)
	}
	s.mu.Unlock()
	select {
	case <-c.done:
		return c.books, c.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (s *Shop) run(ctx context.Context, shelf string, c *call) {
	normal, recovered := false, false
	defer func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.calls[shelf] == c {
			delete(s.calls, shelf)
		}
		if !normal && !recovered {
			return // runtime.Goexit: forget the call, answer nobody
		}
		if c.err == nil {
			s.cache[shelf] = c.books
		}
		close(c.done)
	}()
	func() {
		defer func() {
			if !normal {
				if r := recover(); r != nil {
					recovered = true
					c.books, c.err = nil, fmt.Errorf("shop: %s: query panicked: %v", shelf, r)
				}
			}
		}()
		c.books, c.err = s.db.Top(ctx, shelf)
		if c.err != nil {
			c.err = fmt.Errorf("shop: %s: %w", shelf, c.err)
		}
		normal = true
	}()
}
