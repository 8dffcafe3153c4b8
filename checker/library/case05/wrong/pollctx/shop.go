// Package pollctx is a known-wrong answer to case 5: waiters that check
// now and then. A waiter looks at the flight, then at its context, then
// sleeps a second and looks again. It does return when its visitor gives
// up, a second late; and every waiter gets its list up to a second after
// the query lands.
//
// Verdict: fails "give-up" (the visitor is asleep after its context was
// cancelled).
package pollctx

import (
	"context"
	"fmt"
	"sync"
	"time"

	"stampede/shop/catalog"
)

type flight struct {
	mu     sync.Mutex
	landed bool
	books  []string
	err    error
}

func (f *flight) result() ([]string, error, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.books, f.err, f.landed
}

type Shop struct {
	db      *catalog.DB
	mu      sync.Mutex
	cache   map[string][]string
	flights map[string]*flight
}

func New(db *catalog.DB) *Shop {
	return &Shop{db: db, cache: map[string][]string{}, flights: map[string]*flight{}}
}

func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	s.mu.Lock()
	if b, ok := s.cache[shelf]; ok {
		s.mu.Unlock()
		return b, nil
	}
	f, ok := s.flights[shelf]
	if !ok {
		f = &flight{}
		s.flights[shelf] = f
		go s.fetch(shelf, f)
	}
	s.mu.Unlock()
	for {
		if b, err, done := f.result(); done {
			return b, err
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		time.Sleep(time.Second)
	}
}

func (s *Shop) fetch(shelf string, f *flight) {
	var books []string
	var err error
	defer func() {
		if r := recover(); r != nil {
			books, err = nil, fmt.Errorf("fetching %s: %v", shelf, r)
		}
		s.mu.Lock()
		if err == nil {
			s.cache[shelf] = books
		}
		delete(s.flights, shelf)
		s.mu.Unlock()
		f.mu.Lock()
		f.books, f.err, f.landed = books, err, true
		f.mu.Unlock()
	}()
	books, err = s.db.Top(context.Background(), shelf)
}
