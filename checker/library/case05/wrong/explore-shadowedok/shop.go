// Package shadowedok is case 5's sync.Map answer with one slip: the
// flight's "the query returned" flag is shadowed by the cache check's own
// `ok`, so a flight that finds the cache already filled (its starter
// missed the cache a moment before another flight landed) reports "exited
// without returning" to its visitors. Only a visitor who arrives while a
// fill lands meets it.
//
// Verdict: fails explore, when a scene puts a visitor in that window
// (not every run: the window is a few instructions wide).
package shadowedok

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"stampede/shop/catalog"
)

// The rest is right/syncmap with the flag shadowed.

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
	ok := false
	defer func() {
		if r := recover(); r != nil {
			f.books, f.err = nil, fmt.Errorf("query %s panicked: %v", shelf, r)
		} else if !ok {
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
	if b, ok := s.cache.Load(shelf); ok {
		f.books = b.([]string)
		return
	}
	f.books, f.err = s.db.Top(ctx, shelf)
	ok = true
}
