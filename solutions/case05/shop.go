// Package case05 is the reference solution of case 5, the fetch that
// fails: single-flight with a table of flights in progress, each flown on
// its own goroutine with a context that outlives its starter, landed the
// same way whether the query returns, fails or panics. The chapter is
// docs/05-fetch-that-fails.md.
package case05

import (
	"context"
	"fmt"
	"sync"

	"stampede/shop/catalog"
)

// A flight is one query in progress for a shelf, shared by every visitor
// who wants that shelf while it runs.
type flight struct {
	done  chan struct{} // closed once books and err are set
	books []string
	err   error
}

// Shop serves the shop's shelves from a cache in front of the catalog.
type Shop struct {
	db *catalog.DB

	// mu guards cache and flights. Hits take the read side, so they never
	// wait for each other.
	mu      sync.RWMutex
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
// once, one query runs and they all get its answer, or its error. A
// visitor whose ctx ends stops waiting; the query goes on for the others.
//
// Every visitor of a shelf gets the same slice, from the cache or from the
// flight, as singleflight shares its value: callers must treat it as
// read-only. A copy per call would keep a careless caller safe, but it
// would put an allocation on every hit, the path that must stay cheap.
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
// the books if a flight has filled the cache since the first look.
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
		// The query answers everyone who joins, so it must not end when
		// the visitor who happened to start it gives up: it keeps ctx's
		// values, not its cancellation. It runs on its own goroutine so
		// that the starter, too, can stop waiting. WithoutCancel drops the
		// deadline as well, so a database that hangs keeps this flight in
		// the air for ever; production code bounds the query with
		// context.WithTimeout. The lab leaves it out: its checks hold the
		// query at a gate, and a deadline on the real clock would make the
		// verdicts depend on the machine's speed.
		go s.fly(context.WithoutCancel(ctx), shelf, f)
	}
	return nil, f
}

// fly runs the shelf's query and lands the flight: the books go into the
// cache; a failure goes to the flight's visitors and nowhere else, so the
// next visitor starts a fresh query.
//
// The query can end three ways: it returns, it panics, or it calls
// runtime.Goexit (as t.FailNow does, misused off the test's goroutine by a
// fake database). recover returns nil for both a return and a Goexit, so
// returned, set only after the call, tells them apart, the way
// x/sync/singleflight does.
func (s *Shop) fly(ctx context.Context, shelf string, f *flight) {
	returned := false
	defer func() {
		// A panic or a Goexit must land the flight like any failure, or
		// its visitors would wait forever and an empty list would look
		// like an answer. Nobody else can recover a panic on this
		// goroutine: unrecovered, it would stop the whole shop.
		if r := recover(); r != nil {
			// Production code keeps the stack too (runtime/debug.Stack) or logs it.
			f.books, f.err = nil, fmt.Errorf("shop: %s: the query panicked: %v", shelf, r)
		} else if !returned {
			f.books, f.err = nil, fmt.Errorf("shop: %s: the query ended its goroutine (runtime.Goexit)", shelf)
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
