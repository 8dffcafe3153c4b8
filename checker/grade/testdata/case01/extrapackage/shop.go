// Package extrapackage keeps a helper in a second package in the same
// folder, which Go does not allow.
package extrapackage

import (
	"context"

	"stampede/shop/catalog"
)

type Shop struct{ db *catalog.DB }

func New(db *catalog.DB) *Shop { return &Shop{db: db} }

func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	return s.db.Top(ctx, shelf)
}
