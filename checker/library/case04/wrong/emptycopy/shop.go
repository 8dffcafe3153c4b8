// Package emptycopy is a known-wrong answer to case 4: hits hand out a
// copy of the cached list, so that no visitor can change the cache. The
// copy is made with copy() into a slice of length zero, which copies
// nothing: every hit gets an empty list. The visitors of the burst, who
// get the query's own list, see nothing wrong.
//
// Verdict: fails every check that sends a visitor after the burst.
package emptycopy

import (
	"context"
	"sync"

	"stampede/shop/catalog"
)

type Shop struct {
	db      *catalog.DB
	mu      sync.RWMutex
	cache   map[string][]string
	locksMu sync.Mutex
	locks   map[string]*sync.Mutex
}

func New(db *catalog.DB) *Shop {
	return &Shop{db: db, cache: map[string][]string{}, locks: map[string]*sync.Mutex{}}
}

func (s *Shop) hit(shelf string) ([]string, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	b, ok := s.cache[shelf]
	if !ok {
		return nil, false
	}
	out := make([]string, 0, len(b))
	copy(out, b)
	return out, true
}

func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	if b, ok := s.hit(shelf); ok {
		return b, nil
	}
	s.locksMu.Lock()
	l, ok := s.locks[shelf]
	if !ok {
		l = new(sync.Mutex)
		s.locks[shelf] = l
	}
	s.locksMu.Unlock()
	l.Lock()
	defer l.Unlock()
	if b, ok := s.hit(shelf); ok {
		return b, nil
	}
	b, err := s.db.Top(ctx, shelf)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.cache[shelf] = b
	s.mu.Unlock()
	return b, nil
}
