// Package dochanforget is a known-right answer to case 5 with
// golang.org/x/sync/singleflight's DoChan, written from its documentation:
// the function recovers a panic into an error through its named results
// (DoChan would re-panic it where nobody can recover it), the query runs
// on a context without its starter's cancellation, and every visitor
// waits in a select with its own context. After a runtime.Goexit DoChan
// forgets the flight and answers nobody: the visitors leave by their
// deadlines with their contexts' errors, and the next visitor starts a
// new flight. Nothing is cached but a list.
//
// Verdict: passes every check.
package dochanforget

import (
	"context"
	"fmt"
	"sync"

	"golang.org/x/sync/singleflight"

	"stampede/shop/catalog"
)

type Shop struct {
	db      *catalog.DB
	flights singleflight.Group
	cache   sync.Map // shelf -> []string
}

func New(db *catalog.DB) *Shop { return &Shop{db: db} }

func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	if v, ok := s.cache.Load(shelf); ok {
		return v.([]string), nil
	}
	detached := context.WithoutCancel(ctx)
	results := s.flights.DoChan(shelf, func() (v any, err error) {
		defer func() {
			if p := recover(); p != nil {
				v, err = nil, fmt.Errorf("shop: %s: query panicked: %v", shelf, p)
			}
		}()
		if v, ok := s.cache.Load(shelf); ok {
			return v, nil
		}
		books, err := s.db.Top(detached, shelf)
		if err != nil {
			return nil, fmt.Errorf("shop: %s: %w", shelf, err)
		}
		s.cache.Store(shelf, books)
		return books, nil
	})
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case r := <-results:
		if r.Err != nil {
			return nil, r.Err
		}
		return r.Val.([]string), nil
	}
}
