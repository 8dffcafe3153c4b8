package fleet

import (
	"context"
	"sync"
	"sync/atomic"

	"stampede/checker/harness"
	"stampede/shop/catalog"
)

// RowGates hold the database's row reads, or its writes just before their
// commits, by their order, until the checker opens them, or fail them:
// give Hook to catalog.WithReadHook or catalog.WithCommitHook.
type RowGates struct {
	// Off is set while a scene prepares: nothing is held or counted.
	Off atomic.Bool
	// Then, when set, runs in every call once its gate is open; its error
	// is the call's: one of the query faults (faults.go), or a scene's own
	// hook. Set it before any visitor comes.
	Then catalog.RowHook

	mu    sync.Mutex
	n     int
	nth   map[int]*harness.Gate // holds the n-th call (from 1)
	every *harness.Gate         // when set, holds every call
	all   []*harness.Gate
}

// HoldEvery holds every call at one gate.
func HoldEvery() *RowGates {
	g := harness.NewGate()
	return &RowGates{nth: map[int]*harness.Gate{}, every: g, all: []*harness.Gate{g}}
}

// HoldCalls holds the calls numbered n (from 1), each at its own gate, and
// lets the others through.
func HoldCalls(n ...int) *RowGates {
	gs := &RowGates{nth: map[int]*harness.Gate{}}
	for _, i := range n {
		g := harness.NewGate()
		gs.nth[i] = g
		gs.all = append(gs.all, g)
	}
	return gs
}

// Gate returns the gate of the n-th call.
func (g *RowGates) Gate(n int) *harness.Gate { return g.nth[n] }

// Calls returns how many calls have arrived.
func (g *RowGates) Calls() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.n
}

// Hook is the catalog.RowHook that holds the calls.
func (g *RowGates) Hook(ctx context.Context, book string) error {
	if g.Off.Load() {
		return nil
	}
	g.mu.Lock()
	g.n++
	gate := g.nth[g.n]
	if g.every != nil {
		gate = g.every
	}
	g.mu.Unlock()
	if gate != nil {
		if err := gate.Wait(ctx); err != nil {
			return err
		}
	}
	if g.Then != nil {
		return g.Then(ctx, book)
	}
	return nil
}

// OpenAll opens every gate.
func (g *RowGates) OpenAll() {
	for _, gate := range g.all {
		gate.Open()
	}
}
