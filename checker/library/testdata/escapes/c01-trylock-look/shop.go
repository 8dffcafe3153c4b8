// Package case01 is case 1 of the stampede lab: the bestseller stampede.
//
// Read docs/01-bestseller-stampede.md first. Then:
//
//	go run ./shop run 1     watch the stampede
//	go run ./shop check 1   grade your fix
//
// Make Top single-flight: when many visitors miss the same shelf at once,
// one of them queries the database and the others wait for its answer.
// Keep New's and Top's signatures; import only what docs/README.md lists.
package case01

import (
	"context"
	"sync"

	"stampede/shop/catalog"
)

// Shop serves the shop's shelves from a cache in front of the catalog.
type Shop struct {
	db *catalog.DB

	mu    sync.RWMutex        // guards cache
	cache map[string][]string // shelf -> its books

	locks sync.Map // shelf -> *sync.Mutex, the lock its one fetcher holds
}

// New returns a shop with an empty cache in front of db.
func New(db *catalog.DB) *Shop {
	return &Shop{db: db, cache: make(map[string][]string)}
}

// Top returns a shelf's books. When many visitors miss the same shelf at
// once, one of them queries the database and the rest wait for its answer.
// Every visitor gets the same slice: callers must treat it as read-only.
func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	lock := s.lockFor(shelf)
	if books, ok := s.cached(shelf); ok {
		return books, nil
	}
	if !lock.TryLock() {
		// Somebody is fetching this shelf right now: wait for them, and
		// then look again, since they have filled the cache by now.
		lock.Lock()
		if books, ok := s.cached(shelf); ok {
			lock.Unlock()
			return books, nil
		}
	}
	// We hold the shelf's lock, and the cache did not have the shelf.
	defer lock.Unlock()

	books, err := s.db.Top(ctx, shelf)
	if err != nil {
		return nil, err // nothing cached: the next visitor tries again
	}
	s.mu.Lock()
	s.cache[shelf] = books
	s.mu.Unlock()
	return books, nil
}

func (s *Shop) cached(shelf string) ([]string, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	books, ok := s.cache[shelf]
	return books, ok
}

// lockFor returns the shelf's lock, making it on first use. LoadOrStore
// looks and makes in one step, so two visitors never get two locks.
func (s *Shop) lockFor(shelf string) *sync.Mutex {
	if l, ok := s.locks.Load(shelf); ok {
		return l.(*sync.Mutex)
	}
	l, _ := s.locks.LoadOrStore(shelf, new(sync.Mutex))
	return l.(*sync.Mutex)
}
