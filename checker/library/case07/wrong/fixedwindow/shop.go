// Package fixedwindow is a known-wrong answer to case 7: refresh-ahead with
// a fixed window. Every reader who finds less than 3 s left starts a
// recompute in the background, whatever the query costs and whatever beta
// says, and nothing stops a second reader from starting another while the
// first runs: at 50 reads a second that is 50 recomputes per window.
//
// Verdict: fails "per-window", "delta", "beta" and "one-flight".
package fixedwindow

import (
	"context"
	"sync"
	"time"

	"stampede/shop/catalog"
	"stampede/shop/clock"
)

// ahead is how long before expiry every reader refreshes.
const ahead = 3 * time.Second

// Shop serves shelves from a cache that is refreshed ahead of expiry.
type Shop struct {
	db  *catalog.DB
	clk clock.Clock
	ttl time.Duration

	mu    sync.Mutex
	cache map[string]entry
	locks map[string]*sync.Mutex
}

type entry struct {
	books  []string
	expiry time.Time
}

// New returns a shop with an empty cache in front of db.
func New(db *catalog.DB, clk clock.Clock, _ func() float64, ttl time.Duration, _ float64) *Shop {
	return &Shop{db: db, clk: clk, ttl: ttl, cache: map[string]entry{}, locks: map[string]*sync.Mutex{}}
}

// Top returns a shelf's books.
func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	now := s.clk.Now()
	s.mu.Lock()
	e, ok := s.cache[shelf]
	s.mu.Unlock()
	if ok && now.Before(e.expiry) {
		if e.expiry.Sub(now) < ahead {
			go s.refresh(context.WithoutCancel(ctx), shelf)
		}
		return e.books, nil
	}

	lock := s.lockFor(shelf)
	lock.Lock()
	defer lock.Unlock()
	s.mu.Lock()
	e, ok = s.cache[shelf]
	s.mu.Unlock()
	if ok && s.clk.Now().Before(e.expiry) {
		return e.books, nil
	}
	return s.refresh(ctx, shelf)
}

func (s *Shop) refresh(ctx context.Context, shelf string) ([]string, error) {
	books, err := s.db.Top(ctx, shelf)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.cache[shelf] = entry{books: books, expiry: s.clk.Now().Add(s.ttl)}
	s.mu.Unlock()
	return books, nil
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
