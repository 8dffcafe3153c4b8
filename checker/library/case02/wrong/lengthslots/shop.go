// Package lengthslots is a known-wrong answer to case 2: a lock per slot,
// and the slot is the name's length, "a cheap hash". Shelves whose names
// are as long as each other (bestsellers and staff-picks, eleven letters
// each) share a lock, and one waits for the other's query.
//
// Verdict: fails "apart".
package lengthslots

import (
	"context"
	"sync"

	"stampede/shop/catalog"
)

type Shop struct {
	db    *catalog.DB
	mu    sync.Mutex
	cache map[string][]string
	slots map[int]*sync.Mutex
}

func New(db *catalog.DB) *Shop {
	return &Shop{db: db, cache: map[string][]string{}, slots: map[int]*sync.Mutex{}}
}

func (s *Shop) slot(shelf string) *sync.Mutex {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.slots[len(shelf)]
	if l == nil {
		l = &sync.Mutex{}
		s.slots[len(shelf)] = l
	}
	return l
}

func (s *Shop) lookup(shelf string) ([]string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.cache[shelf]
	return b, ok
}

func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	if b, ok := s.lookup(shelf); ok {
		return b, nil
	}
	l := s.slot(shelf)
	l.Lock()
	defer l.Unlock()
	if b, ok := s.lookup(shelf); ok {
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
