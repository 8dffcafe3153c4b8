// Package dochanpanic is a known-wrong answer to case 5 with
// golang.org/x/sync/singleflight: DoChan, so that waiters can select on
// their context, and a query on a context that outlives its starter. But
// DoChan runs the function on a goroutine of its own, and when the function
// panics there, singleflight re-panics on a new goroutine that nobody can
// recover, rather than leave the callers waiting on their channels. One
// panicking query stops the whole program.
//
// (On a Goexit DoChan sends nothing and forgets the flight, and the
// callers leave by their deadlines, which is allowed.)
package dochanpanic

import (
	"context"
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
	ch := s.group.DoChan(shelf, func() (any, error) {
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
