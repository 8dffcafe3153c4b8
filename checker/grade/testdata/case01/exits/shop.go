// Package exits ends the program from inside a call.
package exits

import (
	"context"
	"os"

	"stampede/shop/catalog"
)

type Shop struct{ db *catalog.DB }

func New(db *catalog.DB) *Shop { return &Shop{db: db} }

func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	os.Exit(3)
	return nil, nil
}
