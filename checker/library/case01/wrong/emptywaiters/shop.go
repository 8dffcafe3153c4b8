// Package emptywaiters is a known-wrong answer to case 1: the waiters wait
// for the one query, then return what they saw before it finished, which
// is nothing.
//
// Verdict: fails "served" and "two-shelves".
package emptywaiters

import (
	"context"
	"sync"

	"stampede/shop/catalog"
)

type Shop struct {
	db       *catalog.DB
	mu       sync.Mutex
	cache    map[string][]string
	inflight map[string]chan struct{}
}

func New(db *catalog.DB) *Shop {
	return &Shop{db: db, cache: map[string][]string{}, inflight: map[string]chan struct{}{}}
}

func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	s.mu.Lock()
	books, ok := s.cache[shelf]
	done, flying := s.inflight[shelf]
	if ok {
		s.mu.Unlock()
		return books, nil
	}
	if flying {
		s.mu.Unlock()
		<-done
		return books, nil // books is still what the cache held before: nil
	}
	done = make(chan struct{})
	s.inflight[shelf] = done
	s.mu.Unlock()

	books, err := s.db.Top(ctx, shelf)
	s.mu.Lock()
	if err == nil {
		s.cache[shelf] = books
	}
	delete(s.inflight, shelf)
	s.mu.Unlock()
	close(done)
	return books, err
}
