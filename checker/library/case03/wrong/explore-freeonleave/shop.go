// Package explorefreeonleave is a known-wrong answer to case 3: one entry
// per shelf with its lock and its books, and the second look under the
// lock. To keep memory small, the student drops a shelf's entry when its
// last visitor leaves. Within a burst that is harmless: everyone is still
// there. The visitor after the burst finds no entry and queries again.
//
// Every check of case 3 plays one burst. Verdict: fails "explore", with a
// visitor who asks after the burst has left.
package explorefreeonleave

import (
	"context"
	"sync"

	"stampede/shop/catalog"
)

type entry struct {
	mu       sync.Mutex // held by the shelf's fetcher
	books    []string   // guarded by mu
	visitors int        // guarded by Shop.mu
}

// Shop serves the shop's shelves in front of the catalog.
type Shop struct {
	db      *catalog.DB
	mu      sync.Mutex // guards entries and each entry's visitors
	entries map[string]*entry
}

// New returns a shop in front of db.
func New(db *catalog.DB) *Shop { return &Shop{db: db, entries: map[string]*entry{}} }

// Top returns a shelf's books.
func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	s.mu.Lock()
	e, ok := s.entries[shelf]
	if !ok {
		e = &entry{}
		s.entries[shelf] = e
	}
	e.visitors++
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		e.visitors--
		if e.visitors == 0 { // the mistake: the books go with the last visitor
			delete(s.entries, shelf)
		}
		s.mu.Unlock()
	}()

	e.mu.Lock()
	defer e.mu.Unlock()
	if e.books != nil { // the second look
		return e.books, nil
	}
	books, err := s.db.Top(ctx, shelf)
	if err != nil {
		return nil, err
	}
	e.books = books
	return books, nil
}
