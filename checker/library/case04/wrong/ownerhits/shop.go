// Package ownerhits is a known-wrong answer to case 4: one goroutine owns the
// cache and the table of flights, and nobody else touches them. Visitors
// send it requests; it answers hits at once, starts a query for the first
// miss of a shelf, and keeps later visitors of that shelf on the flight's
// list until the answer comes back on another channel. No lock at all.
//
// Verdict: fails "hits-shared": every hit waits its turn at the one owner,
// so hits wait for each other.
package ownerhits

import (
	"context"

	"stampede/shop/catalog"
)

type answer struct {
	books []string
	err   error
}

type request struct {
	shelf string
	ctx   context.Context
	reply chan answer // buffered: the owner never waits for a visitor
}

type landing struct {
	shelf string
	answer
}

type Shop struct {
	db       *catalog.DB
	requests chan request
	landings chan landing
}

func New(db *catalog.DB) *Shop {
	s := &Shop{db: db, requests: make(chan request), landings: make(chan landing)}
	go s.own()
	return s
}

// own is the only goroutine that reads or writes cache and flights.
func (s *Shop) own() {
	cache := map[string][]string{}
	flights := map[string][]chan answer{}
	for {
		select {
		case r := <-s.requests:
			if b, ok := cache[r.shelf]; ok {
				r.reply <- answer{books: b}
				continue
			}
			waiting, flying := flights[r.shelf]
			flights[r.shelf] = append(waiting, r.reply)
			if !flying {
				go s.fetch(context.WithoutCancel(r.ctx), r.shelf)
			}
		case l := <-s.landings:
			if l.err == nil {
				cache[l.shelf] = l.books
			}
			for _, reply := range flights[l.shelf] {
				reply <- l.answer
			}
			delete(flights, l.shelf)
		}
	}
}

func (s *Shop) fetch(ctx context.Context, shelf string) {
	b, err := s.db.Top(ctx, shelf)
	s.landings <- landing{shelf, answer{b, err}}
}

func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	reply := make(chan answer, 1)
	select {
	case s.requests <- request{shelf: shelf, ctx: ctx, reply: reply}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	select {
	case a := <-reply:
		return a.books, a.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
