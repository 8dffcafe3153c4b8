package case06

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
		idx, known := keyIndexes(c.args[0], c.args)
		assert.Equal(t, c.keys, idx, "%v", c.args)
		assert.Equal(t, c.known, known, "%v", c.args)
	}
}

func TestAttempt(t *testing.T) {
	lock := []string{"lock:x"}
	cmd := func(args ...string) command {
		idx, known := keyIndexes(args[0], args)
		c := command{name: args[0], args: args[1:], known: known}
		for _, i := range idx {
			c.keys = append(c.keys, args[i])
		}
		return c
	}
	assert.True(t, cmd("set", "lock:x", "t", "px", "2000", "nx").attempt(lock))
	assert.True(t, cmd("evalsha", "abc", "1", "lock:x", "t").attempt(lock))
	assert.False(t, cmd("get", "lock:x").attempt(lock))
	assert.False(t, cmd("pexpire", "lock:x", "2000").attempt(lock))
	assert.False(t, cmd("set", "shelf:x", "v", "nx").attempt(lock))
	noScript := cmd("evalsha", "abc", "1", "lock:x", "t")
	noScript.noScript = true
	assert.False(t, noScript.attempt(lock))

	// A key in a script's ARGV, or in a command the checker does not
	// know, is still a lock attempt: unknown is not "no key".
	assert.True(t, cmd("evalsha", "abc", "0", "lock:x", "t").attempt(lock))
	assert.True(t, cmd("bf.add", "lock:x", "t").attempt(lock))
	assert.False(t, cmd("publish", "filled:x", "lock:x").attempt(lock))
	assert.True(t, cmd("set", "lock:x", "t", "nx").conditional())
	assert.False(t, cmd("incr", "fence:x").conditional())
}

func TestManualClock(t *testing.T) {
	c := newManual()
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
	assert.Equal(t, 55*time.Millisecond, next.Sub(nine))
	assert.Equal(t, nine, c.Now(), "Upcoming moves nothing")
	assert.Equal(t, 3, c.Sleepers(), "Upcoming wakes nobody")
	require.True(t, c.Set(next))
	assert.ElementsMatch(t, []time.Duration{50 * time.Millisecond, 55 * time.Millisecond}, []time.Duration{<-woke, <-woke})
	assert.Equal(t, 55*time.Millisecond, c.Now().Sub(nine))
	next, ok = c.Upcoming()
	require.True(t, ok)
	require.True(t, c.Set(next))
	assert.Equal(t, 80*time.Millisecond, <-woke)
	assert.Equal(t, 80*time.Millisecond, c.Now().Sub(nine))

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.ErrorIs(t, c.Sleep(ctx, time.Second), context.Canceled)
	assert.Zero(t, c.Sleepers(), "a cancelled sleep leaves the clock")
}
