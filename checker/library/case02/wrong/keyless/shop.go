// Package keyless is a known-wrong answer to case 2: it trades the global
// mutex for single-flight, but keeps one flight for the whole shop. A
// visitor for the new releases who arrives during the bestseller flight
// waits for it, and then gets the bestseller list.
//
// Verdict: fails "two-shelves" and "apart".
package keyless

import (
	"context"
	"sync"

	"stampede/shop/catalog"
)

type Shop struct {
	db     *catalog.DB
	mu     sync.Mutex
	cache  map[string][]string
	landed chan struct{} // closed when the current flight lands; nil if none
	books  []string
	err    error
}

func New(db *catalog.DB) *Shop { return &Shop{db: db, cache: map[string][]string{}} }

func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	s.mu.Lock()
	if b, ok := s.cache[shelf]; ok {
		s.mu.Unlock()
		return b, nil
	}
	if landed := s.landed; landed != nil {
		s.mu.Unlock()
		<-landed
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.books, s.err // whichever shelf that flight was for
	}
	landed := make(chan struct{})
	s.landed = landed
	s.mu.Unlock()

	b, err := s.db.Top(ctx, shelf)

	s.mu.Lock()
	if err == nil {
		s.cache[shelf] = b
	}
	s.books, s.err, s.landed = b, err, nil
	s.mu.Unlock()
	close(landed)
	return b, err
}
