// Package logzero is a known-wrong answer to case 7: XFetch with
// single-flight, but u is random() itself, which can be 0. ln(0) is minus
// infinity, so a draw of 0 always says recompute, at whatever point of the
// window it comes. The story's random source returns 0 about once in a
// hundred draws, so there every list is recomputed a second or two after
// it is stored; the checks give it a 0 far from expiry.
//
// Verdict: fails "late".
package logzero

import (
	"context"
	"math"
	"sync"
	"time"

	"stampede/shop/catalog"
	"stampede/shop/clock"
)

// Shop serves shelves from a cache refreshed early with XFetch.
type Shop struct {
	db     *catalog.DB
	clk    clock.Clock
	random func() float64
	ttl    time.Duration
	beta   float64

	mu      sync.Mutex
	cache   map[string]entry
	flights map[string]chan struct{} // closed when the shelf's recompute ends
}

type entry struct {
	books  []string
	delta  time.Duration
	expiry time.Time
}

// New returns a shop with an empty cache in front of db.
func New(db *catalog.DB, clk clock.Clock, random func() float64, ttl time.Duration, beta float64) *Shop {
	return &Shop{db: db, clk: clk, random: random, ttl: ttl, beta: beta,
		cache: map[string]entry{}, flights: map[string]chan struct{}{}}
}

// Top returns a shelf's books.
func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	for {
		now := s.clk.Now()
		s.mu.Lock()
		e, ok := s.cache[shelf]
		if ok && now.Before(e.expiry) {
			// The bug: u is in [0, 1), and ln(0) is -Inf, so the left side
			// is +Inf and the rule fires.
			u := s.random()
			early := now.Sub(e.expiry).Seconds()-e.delta.Seconds()*s.beta*math.Log(u) >= 0
			if early && s.flights[shelf] == nil {
				s.start(ctx, shelf)
			}
			s.mu.Unlock()
			return e.books, nil
		}
		done := s.flights[shelf]
		if done == nil {
			done = s.start(ctx, shelf)
		}
		s.mu.Unlock()
		select {
		case <-done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

func (s *Shop) start(ctx context.Context, shelf string) chan struct{} {
	done := make(chan struct{})
	s.flights[shelf] = done
	go func() {
		began := s.clk.Now()
		books, err := s.db.Top(context.WithoutCancel(ctx), shelf)
		now := s.clk.Now()
		s.mu.Lock()
		if err == nil {
			s.cache[shelf] = entry{books: books, delta: now.Sub(began), expiry: now.Add(s.ttl)}
		}
		delete(s.flights, shelf)
		s.mu.Unlock()
		close(done)
	}()
	return done
}
