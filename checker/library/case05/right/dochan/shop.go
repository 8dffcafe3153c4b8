// Package dochan is a known-right answer to case 5 with
// golang.org/x/sync/singleflight's DoChan. The query runs on a goroutine
// of the group's, on a context that its starter's cancellation does not
// reach, so every visitor can leave by its own context. DoChan re-panics a
// panic on that goroutine, where nobody can recover it, and answers nobody
// after a runtime.Goexit, so the query runs on a goroutine of its own that
// turns both into an error.
//
// Verdict: passes every check.
package dochan

import (
	"context"
	"fmt"
	"sync"

	"golang.org/x/sync/singleflight"

	"stampede/shop/catalog"
)

type Shop struct {
	db    *catalog.DB
	group singleflight.Group
	mu    sync.RWMutex
	cache map[string][]string
}

func New(db *catalog.DB) *Shop { return &Shop{db: db, cache: map[string][]string{}} }

func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	s.mu.RLock()
	b, ok := s.cache[shelf]
	s.mu.RUnlock()
	if ok {
		return b, nil
	}
	qctx := context.WithoutCancel(ctx)
	ch := s.group.DoChan(shelf, func() (any, error) {
		s.mu.RLock()
		b, ok := s.cache[shelf]
		s.mu.RUnlock()
		if ok {
			return b, nil
		}
		b, err := s.query(qctx, shelf)
		if err != nil {
			return nil, err
		}
		s.mu.Lock()
		s.cache[shelf] = b
		s.mu.Unlock()
		return b, nil
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

// query runs the database query on a goroutine of its own and turns a
// panic, or a runtime.Goexit, into an error. DoChan re-panics a panic on a
// goroutine nobody can recover, and after a Goexit it sends nothing at all,
// so neither may reach it.
func (s *Shop) query(ctx context.Context, shelf string) ([]string, error) {
	type answer struct {
		books []string
		err   error
	}
	done := make(chan answer, 1)
	go func() {
		var a answer
		returned := false
		defer func() {
			if r := recover(); !returned {
				a = answer{err: fmt.Errorf("query %s did not return: %v", shelf, r)}
			}
			done <- a
		}()
		a.books, a.err = s.db.Top(ctx, shelf)
		returned = true
	}()
	a := <-done
	return a.books, a.err
}
