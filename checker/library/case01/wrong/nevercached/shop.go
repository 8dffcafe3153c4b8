// Package nevercached is a known-wrong answer to case 1: the burst is
// coalesced, and then forgotten. Visitors who arrive while a query runs
// share it, but its answer is never written to the cache, so the next
// visitor, and the one after, query again.
//
// Verdict: fails "served", "once" and "two-shelves" (the later visitors
// query again).
package nevercached

import (
	"context"
	"sync"

	"stampede/shop/catalog"
)

type result struct {
	wg    sync.WaitGroup
	books []string
	err   error
}

type Shop struct {
	db       *catalog.DB
	mu       sync.Mutex
	cache    map[string][]string
	inflight map[string]*result
}

func New(db *catalog.DB) *Shop {
	return &Shop{db: db, cache: map[string][]string{}, inflight: map[string]*result{}}
}

func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	s.mu.Lock()
	if books, ok := s.cache[shelf]; ok {
		s.mu.Unlock()
		return books, nil
	}
	if r, ok := s.inflight[shelf]; ok {
		s.mu.Unlock()
		r.wg.Wait()
		return r.books, r.err
	}
	r := &result{}
	r.wg.Add(1)
	s.inflight[shelf] = r
	s.mu.Unlock()

	r.books, r.err = s.db.Top(ctx, shelf)
	r.wg.Done()

	s.mu.Lock()
	delete(s.inflight, shelf)
	s.mu.Unlock()
	return r.books, r.err
}
