// Package donechan is a known-right answer to case 5: a per-shelf flight
// with a done channel, run on the goroutine of the visitor who started it.
// Waiters select on the channel and their context; the query runs on a
// context without its starter's cancellation; the flight lands in a
// deferred function that turns a panic into the flight's error. The
// starter waits for its own query to finish even when it gives up. A flag
// set after the query tells a runtime.Goexit (recover says nil) from a
// return, so that a Goexit lands the flight as a failure.
//
// Verdict: passes every check.
package donechan

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
	db     *catalog.DB
	mu     sync.RWMutex
	cache  map[string][]string
	flying map[string]*call
}

func New(db *catalog.DB) *Shop {
	return &Shop{db: db, cache: map[string][]string{}, flying: map[string]*call{}}
}

func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	s.mu.RLock()
	b, ok := s.cache[shelf]
	s.mu.RUnlock()
	if ok {
		return b, nil
	}

	s.mu.Lock()
	if b, ok := s.cache[shelf]; ok {
		s.mu.Unlock()
		return b, nil
	}
	if c, ok := s.flying[shelf]; ok {
		s.mu.Unlock()
		select {
		case <-c.done:
			return c.books, c.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	c := &call{done: make(chan struct{})}
	s.flying[shelf] = c
	s.mu.Unlock()

	s.run(context.WithoutCancel(ctx), shelf, c)
	return c.books, c.err
}

func (s *Shop) run(ctx context.Context, shelf string, c *call) {
	finished := false
	defer func() {
		if r := recover(); r != nil {
			c.books, c.err = nil, fmt.Errorf("query %s panicked: %v", shelf, r)
		} else if !finished {
			c.books, c.err = nil, fmt.Errorf("query %s never returned", shelf)
		}
		s.mu.Lock()
		if c.err == nil {
			s.cache[shelf] = c.books
		}
		delete(s.flying, shelf)
		s.mu.Unlock()
		close(c.done)
	}()
	c.books, c.err = s.db.Top(ctx, shelf)
	finished = true
}
