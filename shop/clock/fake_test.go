package clock

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var start = time.Date(2025, 3, 3, 9, 0, 0, 0, time.UTC)

// asleep waits, in real time, until n goroutines sleep on f.
func asleep(t *testing.T, f *Fake, n int) {
	t.Helper()
	require.Eventually(t, func() bool { return f.Sleepers() == n }, 5*time.Second, time.Millisecond)
}

func TestFakeStandsStill(t *testing.T) {
	f := NewFake(start)
	assert.Equal(t, start, f.Now())
	_, ok := f.Next()
	assert.False(t, ok, "nobody sleeps")
	f.Advance(1500 * time.Millisecond)
	assert.Equal(t, start.Add(1500*time.Millisecond), f.Now())
}

func TestFakeSleepEndsWhenTheClockGetsThere(t *testing.T) {
	f := NewFake(start)
	done := make(chan error)
	go func() { done <- f.Sleep(context.Background(), 2*time.Second) }()
	asleep(t, f, 1)

	next, ok := f.Next()
	require.True(t, ok)
	assert.Equal(t, start.Add(2*time.Second), next)

	f.Advance(time.Second)
	select {
	case <-done:
		t.Fatal("woke a second early")
	default:
	}
	f.Set(next)
	require.NoError(t, <-done)
	assert.Zero(t, f.Sleepers())
}

func TestFakeWakesOnlyTheDue(t *testing.T) {
	f := NewFake(start)
	short, long := make(chan error), make(chan error)
	go func() { short <- f.Sleep(context.Background(), time.Second) }()
	go func() { long <- f.Sleep(context.Background(), time.Minute) }()
	asleep(t, f, 2)

	f.Advance(10 * time.Second)
	require.NoError(t, <-short)
	assert.Equal(t, 1, f.Sleepers())
	next, _ := f.Next()
	assert.Equal(t, start.Add(time.Minute), next)
	f.Set(next)
	require.NoError(t, <-long)
}

func TestFakeSleepCutShort(t *testing.T) {
	f := NewFake(start)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- f.Sleep(ctx, time.Hour) }()
	asleep(t, f, 1)
	cancel()
	assert.ErrorIs(t, <-done, context.Canceled)
	assert.Zero(t, f.Sleepers())

	assert.NoError(t, f.Sleep(context.Background(), 0), "a zero sleep returns at once")
}

func TestFakeNeverRunsBackwards(t *testing.T) {
	f := NewFake(start)
	assert.Panics(t, func() { f.Set(start.Add(-time.Nanosecond)) })
}

func TestFakeIsAClock(t *testing.T) {
	var _ Clock = NewFake(start)
}
