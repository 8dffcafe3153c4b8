// Package istext is a known-wrong answer to case 5: the waiters get an
// error of the shop's own, which keeps the shelf and the database's
// message, and "is" any error whose message it contains, so that
// errors.Is(err, dbErr) still says yes. But the database's error itself
// is gone: errors.As cannot reach it, and any error with the same words is
// taken for it.
//
// Verdict: fails "shared-error".
package istext

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"stampede/shop/catalog"
)

// ShelfError says which shelf failed, and why.
type ShelfError struct {
	Shelf string
	Cause string
}

func (e *ShelfError) Error() string { return e.Shelf + ": " + e.Cause }

// Is matches any error whose message the cause contains.
func (e *ShelfError) Is(target error) bool { return strings.Contains(e.Cause, target.Error()) }

type flight struct {
	done  chan struct{}
	books []string
	err   error
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
		f = &flight{done: make(chan struct{})}
		s.flights[shelf] = f
		go s.fly(context.WithoutCancel(ctx), shelf, f)
	}
	s.mu.Unlock()
	select {
	case <-f.done:
		return f.books, f.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (s *Shop) fly(ctx context.Context, shelf string, f *flight) {
	defer func() {
		if r := recover(); r != nil {
			f.books, f.err = nil, &ShelfError{Shelf: shelf, Cause: fmt.Sprint(r)}
		}
		s.mu.Lock()
		if f.err == nil {
			s.cache[shelf] = f.books
		}
		delete(s.flights, shelf)
		s.mu.Unlock()
		close(f.done)
	}()
	books, err := s.db.Top(ctx, shelf)
	if err != nil {
		f.err = &ShelfError{Shelf: shelf, Cause: err.Error()}
		return
	}
	f.books = books
}
