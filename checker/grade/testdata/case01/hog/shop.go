// Package hog keeps every list it has ever seen, and a great deal more.
package hog

import (
	"context"
	"sync"

	"stampede/shop/catalog"
)

type Shop struct {
	db    *catalog.DB
	mu    sync.Mutex
	hoard [][]byte
}

func New(db *catalog.DB) *Shop { return &Shop{db: db} }

func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	for {
		b := make([]byte, 8<<20)
		for i := 0; i < len(b); i += 4096 {
			b[i] = 1
		}
		s.mu.Lock()
		s.hoard = append(s.hoard, b)
		s.mu.Unlock()
	}
}
