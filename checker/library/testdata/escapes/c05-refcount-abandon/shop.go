// Package case05 is case 5 of the stampede lab: the fetch that fails.
//
// Read docs/05-fetch-that-fails.md first. Then:
//
//	go run ./shop run 5     watch one failed query stop the shelf
//	go run ./shop check 5   grade your fix
//
// This shop has single-flight with one lock per shelf, two looks and a
// guarded cache. Nobody tried it with a database that fails. Make every
// visitor of a failed query get its error, promptly, and the next visitor
// a fresh try; let a visitor who gives up leave without stopping the query
// for the others. Keep New and Top as they are; imports: docs/README.md.
package case05

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"stampede/shop/catalog"
)

// flight is one query in progress for a shelf, shared by every visitor who
// wants that shelf while it runs.
type flight struct {
	done  chan struct{} // closed once books and err are set
	books []string
	err   error

	// waiting counts the visitors still waiting for the flight. When the
	// last one gives up, nobody is left to answer: the query is cancelled
	// and the flight leaves the table, so that the database does not work
	// for nobody and the next visitor starts afresh.
	waiting atomic.Int32
	cancel  context.CancelFunc
}

// Shop serves the shop's shelves from a cache in front of the catalog.
type Shop struct {
	db *catalog.DB

	mu      sync.RWMutex        // guards cache and flights; hits take the read side
	cache   map[string][]string // shelf -> its books
	flights map[string]*flight  // shelf -> its query in progress
}

// New returns a shop with an empty cache in front of db.
func New(db *catalog.DB) *Shop {
	return &Shop{
		db:      db,
		cache:   make(map[string][]string),
		flights: make(map[string]*flight),
	}
}

// Top returns a shelf's books. When many visitors miss the same shelf at
// once, one query runs and they all get its answer, or its error. A visitor
// whose ctx ends stops waiting; the query goes on for the others. Every
// visitor gets the same slice: callers must treat it as read-only.
func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	if books, ok := s.cached(shelf); ok {
		return books, nil
	}
	books, f := s.join(ctx, shelf)
	if f == nil {
		return books, nil
	}
	select {
	case <-f.done:
		return f.books, f.err
	case <-ctx.Done():
		s.leave(shelf, f)
		return nil, ctx.Err()
	}
}

// join returns the shelf's flight, starting one if none is in the air, and
// counts the visitor among its waiters; or the books, if a flight has
// filled the cache since the first look.
func (s *Shop) join(ctx context.Context, shelf string) ([]string, *flight) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if books, ok := s.cache[shelf]; ok {
		return books, nil
	}
	f, ok := s.flights[shelf]
	if !ok {
		// The query belongs to the flight: it keeps ctx's values and not
		// its end, and is cancelled only when every visitor has left.
		qctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		f = &flight{done: make(chan struct{}), cancel: cancel}
		s.flights[shelf] = f
		go s.fly(qctx, shelf, f)
	}
	f.waiting.Add(1)
	return nil, f
}

// leave is called by a visitor who gives up. The last one to leave
// abandons the flight.
func (s *Shop) leave(shelf string, f *flight) {
	f.waiting.Add(-1)
	if f.waiting.Load() == 0 {
		s.abandon(shelf, f)
	}
}

// abandon takes a flight nobody waits for off the table and cancels its
// query.
func (s *Shop) abandon(shelf string, f *flight) {
	s.mu.Lock()
	if s.flights[shelf] == f {
		delete(s.flights, shelf)
	}
	s.mu.Unlock()
	f.cancel()
}

// fly runs the shelf's query and lands the flight however the query ends:
// it returns, it fails, it panics, or it calls runtime.Goexit.
func (s *Shop) fly(ctx context.Context, shelf string, f *flight) {
	returned := false
	defer func() {
		if r := recover(); r != nil {
			f.books, f.err = nil, fmt.Errorf("shop: %s: the query panicked: %v", shelf, r)
		} else if !returned {
			f.books, f.err = nil, fmt.Errorf("shop: %s: the query ended its goroutine (runtime.Goexit)", shelf)
		}
		s.mu.Lock()
		if f.err == nil {
			s.cache[shelf] = f.books
		}
		if s.flights[shelf] == f {
			delete(s.flights, shelf)
		}
		s.mu.Unlock()
		f.cancel()
		close(f.done)
	}()
	books, err := s.db.Top(ctx, shelf)
	if err != nil {
		err = fmt.Errorf("shop: %s: %w", shelf, err)
	}
	f.books, f.err = books, err
	returned = true
}

// cached is a look at the cache under the read lock.
func (s *Shop) cached(shelf string) ([]string, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	books, ok := s.cache[shelf]
	return books, ok
}
