// Package cow is a right answer to case 4, written blind for issue 26: the cache is an immutable map behind an atomic pointer,
// copied on every fill under the writers' mutex, so a hit is one atomic
// load and never waits. Misses join a table of flights under that mutex.
package cow

import (
	"context"
	"errors"
	"maps"
	"sync"
	"sync/atomic"

	"stampede/shop/catalog"
)

// A flight is one query in progress for a shelf.
type flight struct {
	done  chan struct{} // closed once books and err are set
	books []string
	err   error
}

// Shop serves the shop's shelves from a cache in front of the catalog.
type Shop struct {
	db *catalog.DB

	cache atomic.Pointer[map[string][]string] // never written once published

	mu      sync.Mutex         // guards flights; serialises writers of cache
	flights map[string]*flight // shelf -> its query in progress
}

// New returns a shop with an empty cache in front of db.
func New(db *catalog.DB) *Shop {
	s := &Shop{db: db, flights: make(map[string]*flight)}
	empty := make(map[string][]string)
	s.cache.Store(&empty)
	return s
}

var errNoAnswer = errors.New("shop: the query did not return")

// Top returns a shelf's books. The slice is shared: treat it as read-only.
func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	if books, ok := s.cached(shelf); ok {
		return books, nil
	}

	s.mu.Lock()
	if books, ok := s.cached(shelf); ok {
		s.mu.Unlock()
		return books, nil
	}
	if f, ok := s.flights[shelf]; ok {
		s.mu.Unlock()
		<-f.done
		return f.books, f.err
	}
	f := &flight{done: make(chan struct{}), err: errNoAnswer}
	s.flights[shelf] = f
	s.mu.Unlock()

	defer s.land(shelf, f)
	f.books, f.err = s.db.Top(ctx, shelf)
	return f.books, f.err
}

func (s *Shop) cached(shelf string) ([]string, bool) {
	books, ok := (*s.cache.Load())[shelf]
	return books, ok
}

// land publishes a good answer and takes the flight off the table in one
// critical section, then wakes the flight's waiters.
func (s *Shop) land(shelf string, f *flight) {
	s.mu.Lock()
	if f.err == nil {
		old := *s.cache.Load()
		next := make(map[string][]string, len(old)+1)
		maps.Copy(next, old)
		next[shelf] = f.books
		s.cache.Store(&next)
	}
	delete(s.flights, shelf)
	s.mu.Unlock()
	close(f.done)
}
