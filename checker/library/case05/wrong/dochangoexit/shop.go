// Package dochangoexit is a known-wrong answer to case 5 with
// golang.org/x/sync/singleflight: DoChan, a query on a context that
// outlives its starter, and a recover inside the function. It handles a
// panic. But when the query calls runtime.Goexit, the goroutine DoChan runs
// the function on ends, and singleflight, which tells a Goexit from a
// return, sends nothing on the callers' channels: they wait until their
// contexts end, and the flight never lands.
//
// Verdict: fails "goexit" (the visitors are left waiting).
package dochangoexit

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

func (s *Shop) get(shelf string) ([]string, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	b, ok := s.cache[shelf]
	return b, ok
}

func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	if b, ok := s.get(shelf); ok {
		return b, nil
	}
	qctx := context.WithoutCancel(ctx)
	ch := s.group.DoChan(shelf, func() (v any, err error) {
		defer func() {
			if r := recover(); r != nil {
				v, err = nil, fmt.Errorf("query %s panicked: %v", shelf, r)
			}
		}()
		if b, ok := s.get(shelf); ok {
			return b, nil
		}
		b, err := s.db.Top(qctx, shelf)
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
