// Package case04 is case 4 of the stampede lab: the unguarded first look.
//
// Read docs/04-unguarded-first-look.md first. Then:
//
//	go run ./shop run 4     watch hits read the cache while it is written
//	go run ./shop check 4   grade your fix
//
// This shop already has single-flight: one lock per shelf and a second
// look. Its looks at the cache were translated word for word from a
// textbook written for a language with a global interpreter lock, and take
// no lock at all. Make every read and write of the cache safe, without
// making hits wait for each other. Keep New's and Top's signatures;
// import only what docs/README.md lists.
package case04

import (
	"context"
	"sync"
	"sync/atomic"

	"stampede/shop/catalog"
)

// flight is one query in progress for a shelf.
type flight struct {
	done  chan struct{} // closed once books and err are set
	books []string
	err   error
}

// shelfState is what the shop keeps per shelf besides its books: the
// flight in progress, if any.
type shelfState struct {
	flight atomic.Pointer[flight]
}

// Shop serves the shop's shelves from a cache in front of the catalog.
//
// Both maps are sync.Maps: keys written once and read many times, which
// is what sync.Map is built for. A hit is one Load, with no lock.
type Shop struct {
	db *catalog.DB

	cache  sync.Map // shelf -> []string
	states sync.Map // shelf -> *shelfState
}

// New returns a shop with an empty cache in front of db.
func New(db *catalog.DB) *Shop {
	return &Shop{db: db}
}

// Top returns a shelf's books. When many visitors miss the same shelf at
// once, one of them queries the database and the rest wait for its answer.
// Every visitor gets the same slice: callers must treat it as read-only.
func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	if books, ok := s.cached(shelf); ok {
		return books, nil
	}

	st := s.stateOf(shelf)
	mine := &flight{done: make(chan struct{})}
	if f := st.flight.Load(); f != nil {
		<-f.done
		return f.books, f.err
	}
	st.flight.Store(mine)

	// Second look, now that the shelf's flight is ours: a flight may have
	// landed between the first look and ours.
	if books, ok := s.cached(shelf); ok {
		mine.books = books
	} else {
		mine.books, mine.err = s.db.Top(ctx, shelf)
		if mine.err == nil {
			s.cache.Store(shelf, mine.books)
		}
	}
	st.flight.Store(nil)
	close(mine.done)
	return mine.books, mine.err
}

func (s *Shop) cached(shelf string) ([]string, bool) {
	v, ok := s.cache.Load(shelf)
	if !ok {
		return nil, false
	}
	return v.([]string), true
}

// stateOf returns the shelf's state, making it on first use; LoadOrStore
// looks and makes in one step.
func (s *Shop) stateOf(shelf string) *shelfState {
	if v, ok := s.states.Load(shelf); ok {
		return v.(*shelfState)
	}
	v, _ := s.states.LoadOrStore(shelf, &shelfState{})
	return v.(*shelfState)
}
