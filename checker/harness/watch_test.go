package harness

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"stampede/checker/stack"
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
	assert.Equal(t, Running, st.Cause)
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

// A watchdog busy on a tick is still the watchdog: drivers waiting for the
// process to come to rest leave it out. On a loaded machine its work on one
// tick can last until the next, and a driver that counted it in never saw
// the story at rest (CI stopped case 9's story so, after 20 s).
func TestWatcherIsLeftOutWhileItWorks(t *testing.T) {
	h := New(context.Background(), "stampede/checker/harness", time.Second)
	busy, release := make(chan struct{}), make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		var once bool
		_ = h.await(func([]stack.Goroutine) bool {
			if !once { // the watchdog at work: running, not parked
				once = true
				close(busy)
				for {
					select {
					case <-release:
						return true
					default:
					}
				}
			}
			return true
		}, nil, time.Millisecond)
	}()
	<-busy

	var watchers int
	for _, g := range h.others() {
		if Watcher(g) {
			watchers++
			assert.False(t, g.Blocked(), "the watchdog is at work, in state %q", g.State)
		}
	}
	assert.Equal(t, 1, watchers, "the busy watchdog is found by its frames")
	assert.True(t, h.Parked(), "a busy watchdog does not count as a goroutine at work")
	close(release)
	<-done
}

// A crowd whose visitors all wait on a lock nobody will release is
// Deadlocked, the cause a driver decides by; one that spins is Running.
func TestStuckSaysItsCause(t *testing.T) {
	h := New(context.Background(), "stampede/checker/harness", time.Second)
	never := make(chan struct{})
	c := Visit(h, 3, func(ctx context.Context, _ int) (int, error) {
		<-never
		return 0, nil
	})
	var st *Stuck
	require.True(t, errors.As(c.Wait(), &st))
	assert.Equal(t, Deadlocked, st.Cause)
	assert.Equal(t, "deadlocked", st.Why)
	close(never)
	require.NoError(t, c.Wait())
}
