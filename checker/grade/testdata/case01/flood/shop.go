// Package flood starts a hundred watchers a call, and none of them ever
// ends.
package flood

import (
	"context"

	"stampede/shop/catalog"
)

type Shop struct{ db *catalog.DB }

func New(db *catalog.DB) *Shop { return &Shop{db: db} }

func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	for range 100 {
		go func() { <-ctx.Done() }()
	}
	return s.db.Top(ctx, shelf)
}
