// Package perkey is a known-right answer to case 5: a hand-written
// per-shelf lock with two looks under a read lock, made fit for failure.
// The lock is a channel of one slot, so that a waiter can give up on it.
// Each shelf counts its failed queries, and a waiter notes the count before
// it queues: if the count has moved when its turn comes, the query it
// waited for failed, and it takes that error instead of querying again. The
// query runs on a context without its starter's cancellation, and the
// failure is recorded, and the lock let go, by defer, panic or not; a query
// that never returns (runtime.Goexit, which recover does not see) is
// recorded as a failure too.
//
// The starter of a query waits for it to finish even if it gives up: the
// query runs on its goroutine. Every other visitor can leave at once.
//
// Verdict: passes every check.
package perkey

import (
	"context"
	"fmt"
	"sync"

	"stampede/shop/catalog"
)

type shelfLock struct {
	turn chan struct{} // held by whoever has put a token in it
	// Guarded by Shop.mu.
	failures int
	err      error
}

type Shop struct {
	db    *catalog.DB
	mu    sync.RWMutex
	cache map[string][]string
	locks map[string]*shelfLock
}

func New(db *catalog.DB) *Shop {
	return &Shop{db: db, cache: map[string][]string{}, locks: map[string]*shelfLock{}}
}

// look is the first look. On a miss it returns the shelf's lock and how
// many of its queries had failed when the visitor arrived.
func (s *Shop) look(shelf string) ([]string, *shelfLock, int, bool) {
	s.mu.RLock()
	b, ok := s.cache[shelf]
	s.mu.RUnlock()
	if ok {
		return b, nil, 0, true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.locks[shelf]
	if l == nil {
		l = &shelfLock{turn: make(chan struct{}, 1)}
		s.locks[shelf] = l
	}
	return nil, l, l.failures, false
}

func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	b, l, seen, ok := s.look(shelf)
	if ok {
		return b, nil
	}
	select {
	case l.turn <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-l.turn }()

	s.mu.RLock()
	b, ok = s.cache[shelf]
	failures, err := l.failures, l.err
	s.mu.RUnlock()
	switch {
	case ok:
		return b, nil
	case failures != seen:
		return nil, err // the query we queued behind failed: share it
	}
	return s.fetch(ctx, shelf, l)
}

func (s *Shop) fetch(ctx context.Context, shelf string, l *shelfLock) (books []string, err error) {
	returned := false
	defer func() {
		if r := recover(); r != nil {
			books, err = nil, fmt.Errorf("query %s panicked: %v", shelf, r)
		} else if !returned {
			books, err = nil, fmt.Errorf("query %s did not return", shelf)
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if err != nil {
			l.failures++
			l.err = err
			return
		}
		s.cache[shelf] = books
	}()
	books, err = s.db.Top(context.WithoutCancel(ctx), shelf)
	returned = true
	return books, err
}
