// Package spins loops for ever.
package spins

import (
	"context"

	"stampede/shop/catalog"
)

type Shop struct{ db *catalog.DB }

func New(db *catalog.DB) *Shop { return &Shop{db: db} }

func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	n := 0
	for shelf != "" { // the loop that never ends
		n++
	}
	return nil, nil
}
