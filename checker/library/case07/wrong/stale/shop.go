// Package stale is a known-wrong answer to case 7: stale-while-revalidate.
// Nobody refreshes early; a reader who finds the list expired is served
// the expired list at once and starts one recompute in the background. No
// reader waits, but for the length of every recompute the readers get a
// list past its time to live, and a slow query gets no head start at all.
//
// Verdict: fails "no-wait", "delta" and "beta".
package stale

import (
	"context"
	"sync"
	"time"

	"stampede/shop/catalog"
	"stampede/shop/clock"
)

// Shop serves shelves from a cache, stale while it revalidates.
type Shop struct {
	db  *catalog.DB
	clk clock.Clock
	ttl time.Duration

	mu         sync.Mutex
	cache      map[string]entry
	refreshing map[string]bool
	locks      map[string]*sync.Mutex
}

type entry struct {
	books  []string
	expiry time.Time
}

// New returns a shop with an empty cache in front of db.
func New(db *catalog.DB, clk clock.Clock, _ func() float64, ttl time.Duration, _ float64) *Shop {
	return &Shop{db: db, clk: clk, ttl: ttl,
		cache: map[string]entry{}, refreshing: map[string]bool{}, locks: map[string]*sync.Mutex{}}
}

// Top returns a shelf's books.
func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	now := s.clk.Now()
	s.mu.Lock()
	e, ok := s.cache[shelf]
	if ok {
		if !now.Before(e.expiry) && !s.refreshing[shelf] {
			s.refreshing[shelf] = true
			go s.revalidate(context.WithoutCancel(ctx), shelf)
		}
		s.mu.Unlock()
		return e.books, nil
	}
	s.mu.Unlock()

	// A cold miss has nothing to serve: single-flight as in case 1.
	lock := s.lockFor(shelf)
	lock.Lock()
	defer lock.Unlock()
	s.mu.Lock()
	e, ok = s.cache[shelf]
	s.mu.Unlock()
	if ok {
		return e.books, nil
	}
	books, err := s.db.Top(ctx, shelf)
	if err != nil {
		return nil, err
	}
	s.store(shelf, books)
	return books, nil
}

func (s *Shop) revalidate(ctx context.Context, shelf string) {
	books, err := s.db.Top(ctx, shelf)
	s.mu.Lock()
	s.refreshing[shelf] = false
	s.mu.Unlock()
	if err == nil {
		s.store(shelf, books)
	}
}

func (s *Shop) store(shelf string, books []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cache[shelf] = entry{books: books, expiry: s.clk.Now().Add(s.ttl)}
}

func (s *Shop) lockFor(shelf string) *sync.Mutex {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.locks[shelf]
	if !ok {
		l = new(sync.Mutex)
		s.locks[shelf] = l
	}
	return l
}
