// Package case03 is the reference solution of case 3, the missing second
// look: after waiting for the shelf's lock, look in the cache again before
// querying. The chapter is docs/03-second-look.md.
package case03

import (
	"context"
	"sync"

	"stampede/shop/catalog"
)

// Shop serves the shop's shelves from a cache in front of the catalog.
type Shop struct {
	db *catalog.DB

	mu    sync.Mutex             // guards cache and locks
	cache map[string][]string    // shelf -> its books
	locks map[string]*sync.Mutex // shelf -> the lock its fetcher holds
}

// New returns a shop with an empty cache in front of db.
func New(db *catalog.DB) *Shop {
	return &Shop{
		db:    db,
		cache: make(map[string][]string),
		locks: make(map[string]*sync.Mutex),
	}
}

// Top returns a shelf's books. When many visitors miss the same shelf at
// once, one of them queries the database and the rest wait for its answer.
// Every visitor of a shelf gets the same cached slice, so callers must
// treat it as read-only; a copy per hit would cost an allocation each.
func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	if books, ok := s.cached(shelf); ok {
		return books, nil
	}

	lock := s.lockFor(shelf)
	lock.Lock()
	defer lock.Unlock()

	// The second look. A visitor who had to wait for the lock was waiting
	// for the query that filled the cache: querying again now would queue
	// every waiter's query behind the one before it.
	if books, ok := s.cached(shelf); ok {
		return books, nil
	}

	books, err := s.db.Top(ctx, shelf)
	if err != nil {
		return nil, err
	}
	// Filled before the lock is released, so the next holder's second look
	// finds it.
	s.mu.Lock()
	s.cache[shelf] = books
	s.mu.Unlock()
	return books, nil
}

// cached is a look at the cache. It takes the plain mutex, so hits queue
// behind each other; chapter 4 gives the looks an RWMutex's read side,
// which its check hits-shared demands. Case 3 grades the second look only,
// so this stays the shipped code's guard: one lesson at a time.
func (s *Shop) cached(shelf string) ([]string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	books, ok := s.cache[shelf]
	return books, ok
}

// lockFor returns the shelf's lock, making it on first use.
// The table only grows, a lock per shelf ever asked for: production code
// removes a shelf's lock when its flight lands, or bounds the key space.
func (s *Shop) lockFor(shelf string) *sync.Mutex {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.locks[shelf]
	if !ok {
		l = new(sync.Mutex)
		s.locks[shelf] = l
	}
	return l
}
