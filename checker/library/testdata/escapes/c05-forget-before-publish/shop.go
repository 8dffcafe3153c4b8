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

	"stampede/shop/catalog"
)

// flight is one query in progress for a shelf, shared by every visitor who
// wants that shelf while it runs.
type flight struct {
	done  chan struct{} // closed once books and err are set
	books []string
	err   error
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
		return nil, ctx.Err()
	}
}

// join returns the shelf's flight, starting one if none is in the air, or
// the books if a flight has filled the cache since the first look. Looking
// and starting are one critical section.
func (s *Shop) join(ctx context.Context, shelf string) ([]string, *flight) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if books, ok := s.cache[shelf]; ok {
		return books, nil
	}
	f, ok := s.flights[shelf]
	if !ok {
		f = &flight{done: make(chan struct{})}
		s.flights[shelf] = f
		// The query belongs to the flight, not to the visitor who started
		// it: it keeps ctx's values but not its cancellation, and runs on
		// a goroutine of its own so that the starter can leave too.
		go s.fly(context.WithoutCancel(ctx), shelf, f)
	}
	return nil, f
}

// fly runs the shelf's query and lands the flight, however the query ends:
// it returns, it fails, it panics, or it calls runtime.Goexit.
func (s *Shop) fly(ctx context.Context, shelf string, f *flight) {
	returned := false
	defer func() {
		if r := recover(); r != nil {
			f.books, f.err = nil, fmt.Errorf("shop: %s: the query panicked: %v", shelf, r)
		} else if !returned {
			f.books, f.err = nil, fmt.Errorf("shop: %s: the query ended its goroutine (runtime.Goexit)", shelf)
		}
		s.forget(shelf)
		s.publish(shelf, f)
		close(f.done)
	}()
	books, err := s.db.Top(ctx, shelf)
	if err != nil {
		err = fmt.Errorf("shop: %s: %w", shelf, err)
	}
	f.books, f.err = books, err
	returned = true
}

// forget takes the shelf's flight off the table: whatever happened, the
// next visitor after this one starts a fresh query or hits the cache.
func (s *Shop) forget(shelf string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.flights, shelf)
}

// publish caches a flight's books if it succeeded. A failure is not kept:
// it goes to the flight's visitors and nowhere else.
func (s *Shop) publish(shelf string, f *flight) {
	if f.err != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cache[shelf] = f.books
}

// cached is a look at the cache under the read lock.
func (s *Shop) cached(shelf string) ([]string, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	books, ok := s.cache[shelf]
	return books, ok
}
