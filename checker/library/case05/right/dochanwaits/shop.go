// Package dochanwaits is a known-right answer to case 5 with
// golang.org/x/sync/singleflight: DoChan, a query on a context that
// outlives its starter, and a recover inside the function. When the query
// calls runtime.Goexit, the goroutine DoChan runs the function on ends,
// and singleflight, which tells a Goexit from a return, forgets the flight
// and sends nothing on the callers' channels: each waits until its own
// context ends, a server's deadline, and returns its error; the next
// visitor starts a fresh flight. That is what x/sync does, and it is fine.
//
// (Until issue 28 this was a known-wrong entry: the goexit check gave its
// visitors no deadline, so they waited for ever.)
//
// Verdict: passes every check.
package dochanwaits

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
