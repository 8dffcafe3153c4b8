package fleet

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestKeyIndexes(t *testing.T) {
	for _, c := range []struct {
		args  []string
		keys  []int
		known bool
	}{
		{[]string{"get", "k"}, []int{1}, true},
		{[]string{"set", "k", "v", "px", "2000", "nx"}, []int{1}, true},
		{[]string{"del", "a", "b"}, []int{1, 2}, true},
		{[]string{"mset", "a", "1", "b", "2"}, []int{1, 3}, true},
		{[]string{"evalsha", "abc", "2", "a", "b", "arg"}, []int{3, 4}, true},
		{[]string{"eval", "return 1", "0"}, nil, true},
		{[]string{"hello", "3"}, nil, true},
		{[]string{"object", "encoding", "k"}, nil, false},
	} {
		idx, known := KeyIndexes(c.args[0], c.args)
		assert.Equal(t, c.keys, idx, "%v", c.args)
		assert.Equal(t, c.known, known, "%v", c.args)
	}
}

func TestAttempt(t *testing.T) {
	lock := []string{"lock:x"}
	cmd := func(args ...string) Command {
		idx, known := KeyIndexes(args[0], args)
		c := Command{Name: args[0], Args: args[1:], Known: known}
		for _, i := range idx {
			c.Keys = append(c.Keys, args[i])
		}
		return c
	}
	assert.True(t, cmd("set", "lock:x", "t", "px", "2000", "nx").Attempt(lock))
	assert.True(t, cmd("evalsha", "abc", "1", "lock:x", "t").Attempt(lock))
	assert.False(t, cmd("get", "lock:x").Attempt(lock))
	assert.False(t, cmd("pexpire", "lock:x", "2000").Attempt(lock))
	assert.False(t, cmd("set", "shelf:x", "v", "nx").Attempt(lock))
	noScript := cmd("evalsha", "abc", "1", "lock:x", "t")
	noScript.NoScript = true
	assert.False(t, noScript.Attempt(lock))

	// A key in a script's ARGV, or in a command the checker does not
	// know, is still a lock attempt: unknown is not "no key".
	assert.True(t, cmd("evalsha", "abc", "0", "lock:x", "t").Attempt(lock))
	assert.True(t, cmd("bf.add", "lock:x", "t").Attempt(lock))
	assert.False(t, cmd("publish", "filled:x", "lock:x").Attempt(lock))
	assert.True(t, cmd("set", "lock:x", "t", "nx").Conditional())
	assert.False(t, cmd("incr", "fence:x").Conditional())
}

func TestManualClock(t *testing.T) {
	c := NewClock()
	_, ok := c.Upcoming()
	assert.False(t, ok, "nobody sleeps")
	woke := make(chan time.Duration, 3)
	for _, d := range []time.Duration{50 * time.Millisecond, 55 * time.Millisecond, 80 * time.Millisecond} {
		go func() {
			if c.Sleep(context.Background(), d) == nil {
				woke <- d
			}
		}()
	}
	require.Eventually(t, func() bool { return c.Sleepers() == 3 }, time.Second, time.Millisecond)
	// 50 ms and 55 ms lie within one tick: they wake together, at 55 ms.
	next, ok := c.Upcoming()
	require.True(t, ok)
	assert.Equal(t, 55*time.Millisecond, next.Sub(Start()))
	assert.Equal(t, Start(), c.Now(), "Upcoming moves nothing")
	assert.Equal(t, 3, c.Sleepers(), "Upcoming wakes nobody")
	require.True(t, c.Set(next))
	assert.ElementsMatch(t, []time.Duration{50 * time.Millisecond, 55 * time.Millisecond}, []time.Duration{<-woke, <-woke})
	assert.Equal(t, 55*time.Millisecond, c.Now().Sub(Start()))
	next, ok = c.Upcoming()
	require.True(t, ok)
	require.True(t, c.Set(next))
	assert.Equal(t, 80*time.Millisecond, <-woke)
	assert.Equal(t, 80*time.Millisecond, c.Now().Sub(Start()))

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.ErrorIs(t, c.Sleep(ctx, time.Second), context.Canceled)
	assert.Zero(t, c.Sleepers(), "a cancelled sleep leaves the clock")
}

// The story's timelines need each sleeper woken at its own time: a 3 ms
// commit and a 9 ms query must not land together.
func TestExactClockWakesEachSleeperAtItsOwnTime(t *testing.T) {
	t.Run("NewExactClock", func(t *testing.T) { wakesOneByOne(t, NewExactClock()) })
	// A scene's grained clock made exact in the middle (slow-query's 5 s
	// deadline and its answer 5 ms later).
	t.Run("Exact", func(t *testing.T) {
		c := NewClock()
		c.Exact()
		wakesOneByOne(t, c)
	})
}

func wakesOneByOne(t *testing.T, c *Clock) {
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
	assert.Equal(t, 3*time.Millisecond, next.Sub(Start()), "the 9 ms sleeper is within a tick, and still waits")
	require.True(t, c.Set(next))
	assert.Equal(t, 3*time.Millisecond, <-woke)
	assert.Equal(t, 3*time.Millisecond, c.Now().Sub(Start()))
	next, ok = c.Upcoming()
	require.True(t, ok)
	require.True(t, c.Set(next))
	assert.Equal(t, 9*time.Millisecond, <-woke)
}

func TestMadeByShop(t *testing.T) {
	tp := &Tap{log: []Command{
		{Name: "set", Args: []string{"lease:x", "TOKEN", "px", "2000", "nx"}},
		{Name: "incr", Args: []string{"fence:x"}, Reply: "7"},
		{Name: "set", Args: []string{"lease:y", "7", "px", "2000", "nx"}},
	}}
	assert.True(t, MadeByShop([]*Tap{tp}, "TOKEN"), "a value the shop sent")
	assert.False(t, MadeByShop([]*Tap{tp}, "7"), "a value Redis handed out")
	assert.False(t, MadeByShop([]*Tap{tp}, "never-sent"))
}
