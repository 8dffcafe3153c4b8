package harness

import (
	"context"
	"sync"
)

// Gate holds database queries until the checker opens it. Once open, it
// stays open.
type Gate struct {
	once sync.Once
	open chan struct{}
}

// NewGate returns a closed gate.
func NewGate() *Gate { return &Gate{open: make(chan struct{})} }

// Open lets every held query go on, and every later one pass.
func (g *Gate) Open() { g.once.Do(func() { close(g.open) }) }

// Wait blocks until the gate is open or ctx is done.
func (g *Gate) Wait(ctx context.Context) error {
	select {
	case <-g.open:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Hold returns a catalog hook that holds queries on the given shelves at
// the gate and lets queries on other shelves through.
func (g *Gate) Hold(shelves ...string) func(ctx context.Context, shelf string) error {
	return func(ctx context.Context, shelf string) error {
		for _, s := range shelves {
			if s == shelf {
				return g.Wait(ctx)
			}
		}
		return nil
	}
}
