// Package clashpoint is a right answer (a lock per shelf, a second look)
// with a name of its own that the grader's copy with schedule points also
// gives its import: that copy does not compile, and the grader grades the
// file as it is.
package clashpoint

import (
	"context"
	"sync"

	"stampede/shop/catalog"
)

var stampedepoint = "the student's own"

type Shop struct {
	db     *catalog.DB
	mu     sync.Mutex
	cache  map[string][]string
	shelfs map[string]*sync.Mutex
}

func New(db *catalog.DB) *Shop {
	return &Shop{db: db, cache: map[string][]string{}, shelfs: map[string]*sync.Mutex{}}
}

func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	if books, ok := s.look(shelf); ok {
		return books, nil
	}
	s.mu.Lock()
	l := s.shelfs[shelf]
	if l == nil {
		l = new(sync.Mutex)
		s.shelfs[shelf] = l
	}
	s.mu.Unlock()
	l.Lock()
	defer l.Unlock()
	if books, ok := s.look(shelf); ok {
		return books, nil
	}
	books, err := s.db.Top(ctx, shelf)
	if err == nil {
		s.mu.Lock()
		s.cache[shelf] = books
		s.mu.Unlock()
	}
	return books, err
}

func (s *Shop) look(shelf string) ([]string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	books, ok := s.cache[shelf]
	return books, ok
}
