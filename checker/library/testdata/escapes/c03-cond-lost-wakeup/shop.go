// Package case03 is case 3 of the stampede lab: the missing second look.
//
// Read docs/03-second-look.md first. Then:
//
//	go run ./shop run 3     watch the queries queue up
//	go run ./shop check 3   grade your fix
//
// Each shelf has its own lock now, and the table of locks is guarded. Yet
// the visitors who waited for the lock still go to the database, one after
// another, each as soon as it gets the lock. Make a visitor who waited use
// the list that the visitor before it fetched, instead of querying again.
// Keep New's and Top's signatures; import only what docs/README.md lists.
package case03

import (
	"context"
	"sync"
	"sync/atomic"

	"stampede/shop/catalog"
)

// fetch is one query in progress for a shelf. Its visitors wait on cond
// until done is set, and then share its books or its error.
type fetch struct {
	mu    sync.Mutex
	cond  *sync.Cond
	done  atomic.Bool // set once books and err are in place
	books []string
	err   error
}

// Shop serves the shop's shelves from a cache in front of the catalog.
type Shop struct {
	db *catalog.DB

	mu      sync.Mutex          // guards cache and fetches
	cache   map[string][]string // shelf -> its books
	fetches map[string]*fetch   // shelf -> its query in progress
}

// New returns a shop with an empty cache in front of db.
func New(db *catalog.DB) *Shop {
	return &Shop{
		db:      db,
		cache:   make(map[string][]string),
		fetches: make(map[string]*fetch),
	}
}

// Top returns a shelf's books, from the cache when it has them. The first
// visitor to miss starts the shelf's fetch; visitors who miss while it
// runs wait for it and take its answer instead of querying again. Every
// visitor gets the same slice: callers must treat it as read-only.
func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	books, f, lead := s.join(shelf)
	if f == nil {
		return books, nil
	}
	if lead {
		return s.run(ctx, shelf, f)
	}

	f.mu.Lock()
	for !f.done.Load() {
		f.cond.Wait()
	}
	f.mu.Unlock()
	return f.books, f.err
}

// join looks in the cache and, on a miss, returns the shelf's fetch,
// making it if there is none; lead says whether this visitor made it. The
// look and the make are one critical section: a second look that cannot
// miss a fetch that landed since the first.
func (s *Shop) join(shelf string) ([]string, *fetch, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if books, ok := s.cache[shelf]; ok {
		return books, nil, false
	}
	if f, ok := s.fetches[shelf]; ok {
		return nil, f, false
	}
	f := &fetch{}
	f.cond = sync.NewCond(&f.mu)
	s.fetches[shelf] = f
	return nil, f, true
}

// run queries the shelf for its fetch, caches a success, and wakes the
// visitors waiting for it.
func (s *Shop) run(ctx context.Context, shelf string, f *fetch) ([]string, error) {
	f.books, f.err = s.db.Top(ctx, shelf)
	s.mu.Lock()
	if f.err == nil {
		s.cache[shelf] = f.books
	}
	delete(s.fetches, shelf) // a failure is not kept: the next visitor tries again
	s.mu.Unlock()

	// done is atomic, so waking the waiters needs no lock of its own.
	f.done.Store(true)
	f.cond.Broadcast()
	return f.books, f.err
}
