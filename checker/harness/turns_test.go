package harness

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"stampede/checker/check"
	"stampede/checker/point"
)

// lostUpdate stands for a student's code with its bug between two adjacent
// statements: a count read and written back with no lock between, each
// statement behind a schedule point as the grader's copy has them. The
// visitors then wait at the gate, as a held query does.
func lostUpdate(n *atomic.Int64, gate *Gate) func(context.Context, int) (int64, error) {
	return func(ctx context.Context, _ int) (int64, error) {
		point.Here()
		v := n.Load()
		point.Here()
		n.Store(v + 1)
		point.Here()
		return v, gate.Wait(ctx)
	}
}

func TestOneAtATimeClosesTheGapBetweenStatements(t *testing.T) {
	const visitors = 30
	for run := range 5 {
		var n atomic.Int64
		var got []int64
		play := OneAtATime(func(h *H, _ struct{}) check.Verdict {
			gate := NewGate()
			crowd := Visit(h, visitors, lostUpdate(&n, gate))
			require.NoError(t, crowd.Settle())
			assert.False(t, point.Holding(), "Settle returned with goroutines held")
			gate.Open()
			require.NoError(t, crowd.Wait())
			for _, o := range crowd.Outcomes() {
				got = append(got, o.Value)
			}
			return check.Passed("")
		})
		h := New(context.Background(), "checker/harness", 5*time.Second)
		v := play(h, struct{}{})
		require.True(t, v.Pass, "run %d: %s", run, v.Message)
		assert.Equal(t, int64(visitors), n.Load(), "run %d: an update was lost", run)
		// First come, first let go: visitor i read i, in every run.
		for i, v := range got {
			assert.Equal(t, int64(i), v, "run %d: visitor %d", run, i)
		}
		assert.Nil(t, point.Running(), "the schedule ends with the check")
	}
}

func TestOneAtATimeLetsBlockedVisitorsWake(t *testing.T) {
	// Visitors queue on a mutex held across a gate: each one woken is held
	// at its next point and let go in turn, and all of them finish.
	var mu sync.Mutex
	gate := NewGate()
	var inside atomic.Int64
	play := OneAtATime(func(h *H, _ struct{}) check.Verdict {
		crowd := Visit(h, 10, func(ctx context.Context, _ int) (int, error) {
			point.Here()
			mu.Lock()
			point.Here()
			defer mu.Unlock()
			point.Here()
			inside.Add(1)
			return 0, gate.Wait(ctx)
		})
		require.NoError(t, crowd.Settle())
		assert.Equal(t, int64(1), inside.Load(), "one visitor in the lock, the others waiting for it")
		gate.Open()
		require.NoError(t, crowd.Wait())
		return check.Passed("")
	})
	require.True(t, play(New(context.Background(), "checker/harness", 5*time.Second), struct{}{}).Pass)
	assert.Equal(t, int64(10), inside.Load())
}

func TestOneAtATimeStarvesNoPoller(t *testing.T) {
	// Visitors poll on real sleeps for a flag the last visitor sets, and
	// wake again and again. Let go by a fixed priority, the pollers, ahead
	// of the last visitor, could keep it held until the safety net let it
	// go; in turns, each poller goes to the back, and the last one's turn
	// comes.
	const visitors = 30
	var done atomic.Bool
	play := OneAtATime(func(h *H, _ struct{}) check.Verdict {
		crowd := Visit(h, visitors, func(ctx context.Context, i int) (int, error) {
			point.Here()
			if i == visitors-1 {
				done.Store(true)
				return 0, nil
			}
			for !done.Load() {
				point.Here()
				time.Sleep(time.Microsecond)
			}
			return 0, nil
		})
		if err := crowd.Wait(); err != nil {
			return check.Failed("", err.Error())
		}
		return check.Passed("")
	})
	v := play(New(context.Background(), "checker/harness", 10*time.Second), struct{}{})
	assert.True(t, v.Pass, "%s", v.Message)
	assert.False(t, v.Skipped, "%s", v.Message)
}

// BenchmarkOneAtATime is one burst of 50 visitors, ten points each, let go
// in turns: about 550 releases. On two cores with the race detector it
// took 36 ms with a snapshot of every stack before each release, 19 ms
// with the scheduler's counts deciding rest (turnsIdle).
func BenchmarkOneAtATime(b *testing.B) {
	play := OneAtATime(func(h *H, _ struct{}) check.Verdict {
		gate := NewGate()
		crowd := Visit(h, 50, func(ctx context.Context, _ int) (int, error) {
			for range 10 {
				point.Here()
			}
			return 0, gate.Wait(ctx)
		})
		if err := crowd.Settle(); err != nil {
			return check.Failed("", err.Error())
		}
		gate.Open()
		if err := crowd.Wait(); err != nil {
			return check.Failed("", err.Error())
		}
		return check.Passed("")
	})
	for b.Loop() {
		if v := play(New(context.Background(), "checker/harness", 5*time.Second), struct{}{}); !v.Pass {
			b.Fatal(v.Message)
		}
	}
}

// TestCountsDecideRestLetsEveryHeldGoroutineGo: with the scheduler's counts
// deciding rest, Quiet still lets every goroutine a schedule holds go, one
// at a time, with thousands of goroutines parked for good beside them (a
// right answer's pool of workers, left by earlier plays); and the harness
// goes back to snapshots once restored.
func TestCountsDecideRestLetsEveryHeldGoroutineGo(t *testing.T) {
	if _, known := schedulerIdle(); !known {
		t.Skip("the runtime has no scheduler counts")
	}
	parked := make(chan struct{})
	defer close(parked)
	for range 2000 {
		go func() { <-parked }()
	}
	h := New(context.Background(), "checker/harness", 10*time.Second)
	restore := h.CountsDecideRest()
	s := point.Turns()
	point.Start(s)
	var n atomic.Int64
	gate := NewGate()
	crowd := Visit(h, 20, lostUpdate(&n, gate))
	all := func() bool { return true }
	require.NoError(t, h.Quiet(all))
	assert.False(t, point.Holding(), "Quiet returned with goroutines held")
	assert.EqualValues(t, 20, n.Load(), "every visitor at the gate")
	gate.Open()
	require.NoError(t, h.Quiet(all))
	assert.True(t, crowd.Done())
	point.Stop()
	assert.EqualValues(t, 20, n.Load(), "one at a time, no update lost")
	assert.Zero(t, s.Late(), "every hold let go by the harness, none by the safety net")
	restore()
	assert.False(t, h.counts, "restored")
}
