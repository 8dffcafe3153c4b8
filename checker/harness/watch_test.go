package harness

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A story that spins is stopped by its CPU time, long before the clock's
// limit; a story that sleeps on real timers, using almost no CPU time, by
// the clock's; a story that finishes is not stopped at all.
func TestWatchMeasuresAStoryByItsWork(t *testing.T) {
	if _, ok := CPUTime(); !ok {
		t.Skip("this system does not tell CPU time")
	}
	h := New(context.Background(), "stampede/checker/harness", time.Second)

	done := make(chan struct{})
	var stop atomic.Bool
	go func() { // spins
		for !stop.Load() {
		}
	}()
	began := time.Now()
	err := h.Watch(done, 300*time.Millisecond, time.Minute)
	stop.Store(true)
	var st *Stuck
	require.True(t, errors.As(err, &st), "%v", err)
	assert.Equal(t, "still running after 300ms of CPU time", st.Why)
	assert.Less(t, time.Since(began), 30*time.Second)

	stop.Store(false)
	go func() { // asleep on real timers, awake now and then
		for !stop.Load() {
			time.Sleep(5 * time.Millisecond)
		}
	}()
	err = h.Watch(done, time.Minute, 300*time.Millisecond)
	stop.Store(true)
	require.True(t, errors.As(err, &st), "%v", err)
	assert.Equal(t, "still running after 300ms", st.Why)

	go func() { // works a little, sleeps a little, and ends
		time.Sleep(100 * time.Millisecond)
		close(done)
	}()
	assert.NoError(t, h.Watch(done, time.Minute, time.Minute))
}
