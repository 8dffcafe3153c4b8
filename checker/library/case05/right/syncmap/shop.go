// Package syncmap is a known-right answer to case 5 with sync.Map: one for
// the cache and one for the flights, where LoadOrStore decides who starts
// the query. The query runs on a goroutine of its own, on a context
// without its starter's cancellation, so every visitor, the starter too,
// can stop waiting; a deferred function lands the flight, panic, Goexit or
// not (a returned flag written after the query says which; it must be set
// on every way out, the cache-hit return too).
//
// Verdict: passes every check.
package syncmap

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"stampede/shop/catalog"
)

type flight struct {
	done  chan struct{}
	books []string
	err   error
}

type Shop struct {
	db      *catalog.DB
	cache   sync.Map // shelf -> []string
	flights sync.Map // shelf -> *flight
}

func New(db *catalog.DB) *Shop { return &Shop{db: db} }

func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	if b, ok := s.cache.Load(shelf); ok {
		return b.([]string), nil
	}
	f := &flight{done: make(chan struct{})}
	if other, loaded := s.flights.LoadOrStore(shelf, f); loaded {
		f = other.(*flight)
	} else {
		go s.fly(context.WithoutCancel(ctx), shelf, f)
	}
	select {
	case <-f.done:
		return f.books, f.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (s *Shop) fly(ctx context.Context, shelf string, f *flight) {
	returned := false
	defer func() {
		if r := recover(); r != nil {
			f.books, f.err = nil, fmt.Errorf("query %s panicked: %v", shelf, r)
		} else if !returned {
			f.books, f.err = nil, errors.New("query "+shelf+" exited without returning")
		}
		if f.err == nil {
			s.cache.Store(shelf, f.books)
		}
		s.flights.Delete(shelf)
		close(f.done)
	}()
	// The cache may have been filled between our look and LoadOrStore, by
	// a flight that has since landed.
	if b, hit := s.cache.Load(shelf); hit {
		f.books, returned = b.([]string), true
		return
	}
	f.books, f.err = s.db.Top(ctx, shelf)
	returned = true
}
