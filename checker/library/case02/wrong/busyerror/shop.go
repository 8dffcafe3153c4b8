// Package busyerror is a known-wrong answer to case 2: a shelf's lock is
// taken with a deadline, "so that no request hangs". A visitor polls
// TryLock for up to 120 ms, then answers ErrBusy. The story's query takes
// 0.2 s: every waiter gets ErrBusy instead of the list.
//
// Verdict: fails "served".
package busyerror

import (
	"context"
	"errors"
	"sync"
	"time"

	"stampede/shop/catalog"
)

// ErrBusy tells the visitor to come back later.
var ErrBusy = errors.New("shelf is being loaded, try again")

type Shop struct {
	db    *catalog.DB
	mu    sync.Mutex
	cache map[string][]string
	locks map[string]*sync.Mutex
}

func New(db *catalog.DB) *Shop {
	return &Shop{db: db, cache: map[string][]string{}, locks: map[string]*sync.Mutex{}}
}

func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	s.mu.Lock()
	if b, ok := s.cache[shelf]; ok {
		s.mu.Unlock()
		return b, nil
	}
	l, ok := s.locks[shelf]
	if !ok {
		l = &sync.Mutex{}
		s.locks[shelf] = l
	}
	s.mu.Unlock()

	for waited := time.Duration(0); !l.TryLock(); waited += 10 * time.Millisecond {
		if waited >= 120*time.Millisecond {
			return nil, ErrBusy
		}
		time.Sleep(10 * time.Millisecond)
	}
	defer l.Unlock()

	s.mu.Lock()
	b, ok := s.cache[shelf]
	s.mu.Unlock()
	if ok {
		return b, nil
	}
	b, err := s.db.Top(ctx, shelf)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.cache[shelf] = b
	s.mu.Unlock()
	return b, nil
}
