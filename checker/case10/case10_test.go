package case10

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"stampede/checker/harness"
)

// The story's timelines need each sleeper woken at its own time: a 3 ms
// commit and a 9 ms query must not land together.
func TestExactClockWakesEachSleeperAtItsOwnTime(t *testing.T) {
	c := newExact()
	woke := make(chan time.Duration, 2)
	for _, d := range []time.Duration{3 * time.Millisecond, 9 * time.Millisecond} {
		go func() {
			if c.Sleep(context.Background(), d) == nil {
				woke <- d
			}
		}()
	}
	require.Eventually(t, func() bool { return c.Sleepers() == 2 }, time.Second, time.Millisecond)
	next, ok := c.Upcoming()
	require.True(t, ok)
	assert.Equal(t, 3*time.Millisecond, next.Sub(nine), "the 9 ms sleeper is within a tick, and still waits")
	require.True(t, c.Set(next))
	assert.Equal(t, 3*time.Millisecond, <-woke)
	assert.Equal(t, 3*time.Millisecond, c.Now().Sub(nine))
	next, ok = c.Upcoming()
	require.True(t, ok)
	require.True(t, c.Set(next))
	assert.Equal(t, 9*time.Millisecond, <-woke)
}

func TestMadeByShop(t *testing.T) {
	tp := &tap{log: []command{
		{name: "set", args: []string{"lease:x", "TOKEN", "px", "2000", "nx"}, reply: "true"},
		{name: "incr", args: []string{"fence:x"}, reply: "7"},
		{name: "set", args: []string{"lease:y", "7", "px", "2000", "nx"}, reply: "true"},
	}}
	assert.True(t, madeByShop([]*tap{tp}, "TOKEN"), "a value the shop sent")
	assert.False(t, madeByShop([]*tap{tp}, "7"), "a value Redis handed out")
	assert.False(t, madeByShop([]*tap{tp}, "never-sent"))
}

func TestCents(t *testing.T) {
	assert.Equal(t, "12.99", cents(1299))
	assert.Equal(t, "9.05", cents(905))
}

// The scenes start the row at version 9, so that their first write makes
// it 10: "9" sorts after "10" as text, which catches a version compared
// as a string.
func TestScenesStartAtVersionNine(t *testing.T) {
	h := harness.New(context.Background(), "stampede/solutions/case10", harness.DefaultBound)
	s, err := newScene(h, nil, 0, holdCalls(), holdCalls(1))
	require.NoError(t, err)
	defer s.Close()
	assert.Equal(t, int64(9), s.Truth().Version)
	assert.Zero(t, s.commits.Calls(), "the preparation's writes are not counted")
	assert.Greater(t, "9", "10")
}
