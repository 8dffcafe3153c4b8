package harness

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"stampede/checker/stack"
)

func TestQuietWaitsForTheProcessToComeToRest(t *testing.T) {
	h := New(context.Background(), "stampede/checker/harness", time.Second)
	var mu sync.Mutex
	mu.Lock()
	var spins atomic.Int64
	stop := make(chan struct{})
	go func() { // busy for a while, then blocked on mu
		for spins.Add(1) < 200_000 {
		}
		close(stop)
		mu.Lock()
		mu.Unlock()
	}()
	require.NoError(t, h.Quiet(func() bool { return true }))
	select {
	case <-stop:
	default:
		t.Fatal("Quiet returned while a goroutine was still running")
	}
	assert.True(t, h.Parked())
	// Idle reads the scheduler's counts, which include the runtime's own
	// goroutines: a garbage collection's mark workers run for a moment
	// now and then, at rest or not. So Idle must come true soon, and a
	// process that never rests (below) never makes it true.
	assert.Eventually(t, h.Idle, time.Second, time.Millisecond)
	mu.Unlock()
}

func TestQuietReportsCodeThatNeverRests(t *testing.T) {
	h := New(context.Background(), "stampede/checker/harness", 50*time.Millisecond)
	var stop atomic.Bool
	defer stop.Store(true)
	go func() {
		for !stop.Load() {
		}
	}()
	var st *Stuck
	require.ErrorAs(t, h.Quiet(func() bool { return true }), &st)
	assert.Contains(t, st.Why, "still running")
	assert.Equal(t, Running, st.Cause)
	assert.False(t, h.Parked())
	assert.False(t, h.Idle())
}

// A process kept busy by code outside the code under test is no loop of
// that code's: a driver may take it for a loaded machine and look again.
func TestABusyProcessIsNotTheCodesLoop(t *testing.T) {
	h := New(context.Background(), "stampede/cases/case01", 50*time.Millisecond)
	var stop atomic.Bool
	defer stop.Store(true)
	go func() {
		for !stop.Load() {
			runtime.Gosched() // descheduled often, so snapshots see its stack
		}
	}()
	var st *Stuck
	require.ErrorAs(t, h.Quiet(func() bool { return true }), &st)
	assert.Contains(t, st.Why, "still running")
	assert.Equal(t, Running, st.Cause)
	assert.False(t, st.Looping)
}

func TestQuietLeavesOutTheHarnessesOwnWatchers(t *testing.T) {
	h := New(context.Background(), "stampede/checker/harness", time.Second)
	done := make(chan struct{})
	defer close(done)
	// A watcher polling snapshots on its own ticker, as a story's watchdog
	// does, never holds Quiet up.
	go func() {
		_ = h.await(func([]stack.Goroutine) bool { return false }, done, 50*time.Microsecond, wallBudget(time.Minute))
	}()
	for range 20 {
		require.NoError(t, h.Quiet(func() bool { return true }))
	}
}
