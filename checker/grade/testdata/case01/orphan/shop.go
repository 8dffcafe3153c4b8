// Package orphan starts a program that outlives it, once per process.
package orphan

import (
	"context"
	"os/exec"
	"sync"

	"stampede/shop/catalog"
)

// Marker is the sleeper's argument, so that a test can find it.
const Marker = "3601.25"

var start sync.Once

type Shop struct{ db *catalog.DB }

func New(db *catalog.DB) *Shop { return &Shop{db: db} }

func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	start.Do(func() { exec.Command("sleep", Marker).Start() })
	return s.db.Top(ctx, shelf)
}
