// Package exitzero ends the program, with status 0, from inside a call.
package exitzero

import (
	"context"
	"os"

	"stampede/shop/catalog"
)

type Shop struct{ db *catalog.DB }

func New(db *catalog.DB) *Shop { return &Shop{db: db} }

func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	os.Exit(0)
	return nil, nil
}
