// Package stripes is a known-wrong answer to case 2: striped locks. A
// map of locks "grows without bound", so the student keeps eight locks and
// picks one by a hash of the shelf's name. Eight stripes for sixteen
// shelves: shelves that share a stripe wait for each other's queries, the
// global lock of case 2 in eight pieces.
//
// Verdict: fails "apart".
package stripes

import (
	"context"
	"hash/fnv"
	"sync"

	"stampede/shop/catalog"
)

const stripes = 8

type Shop struct {
	db    *catalog.DB
	mu    sync.RWMutex
	cache map[string][]string
	locks [stripes]sync.Mutex
}

func New(db *catalog.DB) *Shop { return &Shop{db: db, cache: map[string][]string{}} }

func (s *Shop) stripe(shelf string) *sync.Mutex {
	h := fnv.New32a()
	h.Write([]byte(shelf))
	return &s.locks[h.Sum32()%stripes]
}

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
	l := s.stripe(shelf)
	l.Lock()
	defer l.Unlock()
	if b, ok := s.get(shelf); ok {
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
