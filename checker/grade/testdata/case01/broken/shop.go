// Package broken does not compile.
package broken

import (
	"context"

	"stampede/shop/catalog"
)

type Shop struct{ db *catalog.DB }

func New(db *catalog.DB) *Shop { return &Shop{db: db} }

func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	return s.db.Top(ctx, shelf), nil
}
