// Package panics panics in every call.
package panics

import (
	"context"

	"stampede/shop/catalog"
)

type Shop struct{ db *catalog.DB }

func New(db *catalog.DB) *Shop { return &Shop{db: db} }

func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	panic("boom: the shelf fell over")
}
