// Package dochanrecv is a known-wrong answer to case 5 with
// golang.org/x/sync/singleflight's DoChan, a recover inside the function
// and a query on a context that outlives its starter. But each visitor
// receives from DoChan's channel and nothing else: "DoChan always
// answers". After a runtime.Goexit it answers nobody, and with no select
// on ctx.Done() the visitors have no way out, not even their deadlines; a
// visitor who gives up cannot leave either.
package dochanrecv

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
	books, ok := s.cache[shelf]
	s.mu.RUnlock()
	if ok {
		return books, nil
	}
	qctx := context.WithoutCancel(ctx)
	r := <-s.group.DoChan(shelf, func() (v any, err error) {
		defer func() {
			if p := recover(); p != nil {
				v, err = nil, fmt.Errorf("shop: %s: the query panicked: %v", shelf, p)
			}
		}()
		books, err := s.db.Top(qctx, shelf)
		if err != nil {
			return nil, fmt.Errorf("shop: %s: %w", shelf, err)
		}
		s.mu.Lock()
		s.cache[shelf] = books
		s.mu.Unlock()
		return books, nil
	})
	if r.Err != nil {
		return nil, r.Err
	}
	return r.Val.([]string), nil
}
