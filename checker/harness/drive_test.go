package harness

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"stampede/shop/clock"
)

var t0 = time.Date(2025, 3, 3, 9, 0, 0, 0, time.UTC)

// fakeDriver drives a clock.Fake, resting as the explorers do.
func fakeDriver(h *H, clk *clock.Fake) Driver {
	return Driver{
		H:      h,
		Rest:   func() error { return h.Quiet(func() bool { return true }) },
		Now:    clk.Now,
		Next:   clk.Next,
		MoveTo: func(t time.Time) error { clk.Set(t); return nil },
	}
}

// sleepers starts a goroutine per duration, each asleep on clk for it, and
// records when each woke on the clock.
func sleepers(clk *clock.Fake, ds ...time.Duration) (woke func() []time.Duration, wg *sync.WaitGroup) {
	var mu sync.Mutex
	var at []time.Duration
	wg = &sync.WaitGroup{}
	for _, d := range ds {
		wg.Go(func() {
			if clk.Sleep(context.Background(), d) == nil {
				mu.Lock()
				at = append(at, clk.Now().Sub(t0))
				mu.Unlock()
			}
		})
	}
	return func() []time.Duration {
		mu.Lock()
		defer mu.Unlock()
		return append([]time.Duration(nil), at...)
	}, wg
}

func TestDriveWakesEachSleeperAtItsTime(t *testing.T) {
	h := New(context.Background(), "stampede/nowhere", DefaultBound)
	clk := clock.NewFake(t0)
	woke, wg := sleepers(clk, 3*time.Second, time.Second, 2*time.Second)
	d := fakeDriver(h, clk)
	var n atomic.Int32
	require.NoError(t, d.Drive(func() bool { n.Store(int32(len(woke()))); return n.Load() == 3 }, time.Minute))
	wg.Wait()
	assert.Equal(t, []time.Duration{time.Second, 2 * time.Second, 3 * time.Second}, woke())
	assert.Equal(t, 3*time.Second, clk.Now().Sub(t0))
}

func TestDriveGivesUpAtItsLimitAndOnAWaitForNothing(t *testing.T) {
	h := New(context.Background(), "stampede/nowhere", DefaultBound)
	clk := clock.NewFake(t0)
	_, wg := sleepers(clk, time.Hour)
	err := fakeDriver(h, clk).Drive(func() bool { return false }, time.Minute)
	assert.ErrorIs(t, err, ErrNoBound)
	assert.Equal(t, time.Minute, clk.Now().Sub(t0), "the clock stops at the limit, not at the wake-up after it")
	clk.Set(t0.Add(time.Hour)) // the sleeper goes, not to be seen by the next scene
	wg.Wait()

	// What is done only at a wake-up past the limit was not done within it.
	clk = clock.NewFake(t0)
	woke, wg := sleepers(clk, 2*time.Second)
	err = fakeDriver(h, clk).Drive(func() bool { return len(woke()) > 0 }, time.Second)
	assert.ErrorIs(t, err, ErrNoBound)
	assert.Equal(t, time.Second, clk.Now().Sub(t0))
	clk.Set(t0.Add(2 * time.Second))
	wg.Wait()

	clk = clock.NewFake(t0)
	never := make(chan struct{})
	go func() { <-never }()
	defer close(never)
	err = fakeDriver(h, clk).Drive(func() bool { return false }, time.Minute)
	var st *Stuck
	require.True(t, errors.As(err, &st), "%v", err)
	assert.Equal(t, Deadlocked, st.Cause)
}

func TestUntilStopsAtEachWakeUpOnTheWayAndElapseRestsAtTheEnd(t *testing.T) {
	h := New(context.Background(), "stampede/nowhere", DefaultBound)
	clk := clock.NewFake(t0)
	woke, _ := sleepers(clk, time.Second, 5*time.Second)
	d := fakeDriver(h, clk)
	require.NoError(t, d.Rest())
	require.NoError(t, d.Until(t0.Add(2*time.Second)))
	assert.Equal(t, 2*time.Second, clk.Now().Sub(t0))
	assert.Equal(t, []time.Duration{time.Second}, woke(), "the sleeper due on the way has woken and come to rest")
	require.NoError(t, d.Elapse(3*time.Second))
	assert.Equal(t, []time.Duration{time.Second, 5 * time.Second}, woke(), "Elapse lets the one due at its end come to rest")
}

func TestElapseLooksForRestAfterItsLastMoveOnlyWhenItMayHaveWokenSomeone(t *testing.T) {
	h := New(context.Background(), "stampede/nowhere", DefaultBound)
	clk := clock.NewFake(t0)
	woke, _ := sleepers(clk, 5*time.Second)
	d := fakeDriver(h, clk)
	rests := 0
	rest := d.Rest
	d.Rest = func() error { rests++; return rest() }
	require.NoError(t, d.Elapse(2*time.Second))
	assert.Equal(t, 1, rests, "nobody was due by its end: the scene it found at rest is at rest still")
	assert.Empty(t, woke())
	rests = 0
	require.NoError(t, d.Elapse(4*time.Second))
	assert.Equal(t, 2, rests, "once before it moved, once after the sleeper due on the way woke, none after the last move")
	assert.Equal(t, []time.Duration{5 * time.Second}, woke())
	assert.Equal(t, 6*time.Second, clk.Now().Sub(t0))

	// On a real Redis (Grace) a reply can be on its way unseen: it looks
	// after the last move too.
	d.Grace = 5
	rests = 0
	require.NoError(t, d.Elapse(time.Second))
	assert.Equal(t, 2, rests, "before it moved, and after, where a reply may be on its way")
}
