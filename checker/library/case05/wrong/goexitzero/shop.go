// Package goexitzero is a known-wrong answer to case 5 with
// golang.org/x/sync/singleflight's DoChan. The student read that DoChan
// answers nobody after a runtime.Goexit, so the function runs the query on
// a goroutine of its own and always sends its answer back, from a deferred
// function. But on a Goexit that answer is the zero one, no books and no
// error: the function takes it for a success, caches the empty list, and
// every visitor gets it.
package goexitzero

import (
	"context"
	"fmt"
	"sync"

	"golang.org/x/sync/singleflight"

	"stampede/shop/catalog"
)

type result struct {
	books []string
	err   error
}

type Shop struct {
	db    *catalog.DB
	group singleflight.Group
	mu    sync.RWMutex
	cache map[string][]string
}

func New(db *catalog.DB) *Shop { return &Shop{db: db, cache: map[string][]string{}} }

func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	s.mu.RLock()
	books, ok := s.cache[shelf]
	s.mu.RUnlock()
	if ok {
		return books, nil
	}
	qctx := context.WithoutCancel(ctx)
	ch := s.group.DoChan(shelf, func() (any, error) {
		r := s.query(qctx, shelf)
		if r.err != nil {
			return nil, r.err
		}
		s.mu.Lock()
		s.cache[shelf] = r.books
		s.mu.Unlock()
		return r.books, nil
	})
	select {
	case r := <-ch:
		if r.Err != nil {
			return nil, r.Err
		}
		return r.Val.([]string), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// query runs the database query on its own goroutine, so that whatever
// happens to that goroutine, an answer comes back.
func (s *Shop) query(ctx context.Context, shelf string) result {
	out := make(chan result, 1)
	go func() {
		var r result
		defer func() {
			if p := recover(); p != nil {
				r.err = fmt.Errorf("shop: %s: the query panicked: %v", shelf, p)
			}
			out <- r
		}()
		r.books, r.err = s.db.Top(ctx, shelf)
	}()
	return <-out
}
