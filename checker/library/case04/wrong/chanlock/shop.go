// Package chanlock is a known-wrong answer to case 4: "share memory by
// communicating", read as a channel with one token guarding the cache.
// Every look takes the token and gives it back, so there is no data race,
// and every hit waits for every other hit, as under a plain mutex.
//
// Verdict: fails "hits-shared" (hits wait in chan send).
package chanlock

import (
	"context"
	"sync"

	"stampede/shop/catalog"
)

type Shop struct {
	db    *catalog.DB
	token chan struct{} // one token: whoever holds it may touch cache
	cache map[string][]string

	locksMu sync.Mutex
	locks   map[string]*sync.Mutex
}

func New(db *catalog.DB) *Shop {
	return &Shop{db: db, token: make(chan struct{}, 1), cache: map[string][]string{}, locks: map[string]*sync.Mutex{}}
}

func (s *Shop) look(shelf string) ([]string, bool) {
	s.token <- struct{}{}
	b, ok := s.cache[shelf]
	<-s.token
	return b, ok
}

func (s *Shop) store(shelf string, b []string) {
	s.token <- struct{}{}
	s.cache[shelf] = b
	<-s.token
}

func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	if b, ok := s.look(shelf); ok {
		return b, nil
	}
	s.locksMu.Lock()
	l, ok := s.locks[shelf]
	if !ok {
		l = new(sync.Mutex)
		s.locks[shelf] = l
	}
	s.locksMu.Unlock()
	l.Lock()
	defer l.Unlock()
	if b, ok := s.look(shelf); ok {
		return b, nil
	}
	b, err := s.db.Top(ctx, shelf)
	if err != nil {
		return nil, err
	}
	s.store(shelf, b)
	return b, nil
}
