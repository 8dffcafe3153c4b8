// Package explorenocache is a known-wrong answer to case 1: single-flight
// with golang.org/x/sync/singleflight, and no cache at all. The student
// read "one query for the burst" and stopped there: a burst shares one
// flight, but once the flight has landed nothing keeps the list, so the
// next visitor, a second later or a few yields after the fill, queries
// again.
//
// Every check that plays one burst passes it. Verdict: fails "explore",
// with a visitor who arrives after the fill has landed and queries again.
package explorenocache

import (
	"context"

	"golang.org/x/sync/singleflight"

	"stampede/shop/catalog"
)

// Shop serves the shop's shelves in front of the catalog.
type Shop struct {
	db    *catalog.DB
	group singleflight.Group
}

// New returns a shop in front of db.
func New(db *catalog.DB) *Shop { return &Shop{db: db} }

// Top returns a shelf's books: visitors who ask while a query runs share it.
func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	v, err, _ := s.group.Do(shelf, func() (any, error) {
		return s.db.Top(ctx, shelf)
	})
	if err != nil {
		return nil, err
	}
	return v.([]string), nil
}
