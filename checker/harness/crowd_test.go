package harness

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// spinTop stands for a student's Top whose waiters spin on a flag while the
// first visitor's query is held at the gate.
func spinTop(ctx context.Context, gate *Gate, first *atomic.Bool, landed *atomic.Bool) error {
	if first.CompareAndSwap(false, true) {
		err := gate.Wait(ctx) // the query, held by the checker
		landed.Store(true)
		return err
	}
	for !landed.Load() {
		runtime.Gosched()
	}
	return nil
}

func TestSpinningWaitersAreCalledSpinning(t *testing.T) {
	h := New(context.Background(), "checker/harness", 200*time.Millisecond)
	gate := NewGate()
	defer gate.Open()
	var first, landed atomic.Bool
	crowd := Visit(h, 4, func(ctx context.Context, _ int) (struct{}, error) {
		return struct{}{}, spinTop(ctx, gate, &first, &landed)
	})
	var st *Stuck
	require.ErrorAs(t, crowd.Settle(), &st)
	assert.True(t, st.Busy)
	assert.True(t, st.Looping, "the visitors spin in the code under test")
	// One snapshot: a spinner caught between two calls of Gosched (at the
	// loop's condition) is "still running near" line 22, so how many are
	// seen spinning depends on the instant (make test saw 2 of 3 at a load
	// of 15). At least one is, and the held query is named.
	assert.Regexp(t, `[123] visitors? spinning at \S*crowd_test.go:23 \(a loop around runtime.Gosched\)`, st.Error())
	assert.Contains(t, st.Error(), "which the checker holds")
	assert.Contains(t, st.Hint, "busy-waiting")
	gate.Open()
	require.NoError(t, crowd.Wait())
}

func TestEachVisitorHasAContextOfItsOwn(t *testing.T) {
	h := New(context.Background(), "checker/harness", time.Second)
	seen := make([]context.Context, 8)
	crowd := Visit(h, len(seen), func(ctx context.Context, i int) (struct{}, error) {
		seen[i] = ctx
		return struct{}{}, nil
	})
	require.NoError(t, crowd.Wait())
	for i := range seen {
		for j := range i {
			assert.NotEqual(t, seen[i], seen[j], "visitors %d and %d share a context", i, j)
		}
	}
}
