// Package goroutinepanic panics on a goroutine of its own, where the
// checker cannot recover it: the whole program crashes.
package goroutinepanic

import (
	"context"

	"stampede/shop/catalog"
)

type Shop struct{ db *catalog.DB }

func New(db *catalog.DB) *Shop { return &Shop{db: db} }

func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	done := make(chan struct{})
	go func() {
		var m map[string]int
		m[shelf] = 1 // panic: assignment to entry in nil map
		close(done)
	}()
	<-done
	return nil, nil
}
