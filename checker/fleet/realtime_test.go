package fleet_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"stampede/checker/fleet"
)

// servers are the servers a test of the World runs on: the embedded one,
// and a real one when REDIS_URL names it (.ci/redis.sh does).
func servers() map[string]string {
	out := map[string]string{"embedded": ""}
	if url := fleet.ServerURL(); url != "" {
		out["real"] = url
	}
	return out
}

// A RealTime World holds nothing still: Read gives each key's time to live
// as the server has it, timed by when it was read, and Wrote when each key
// was last written; Delete and Evict take keys away.
func TestRealTimeReadAndWrote(t *testing.T) {
	for name, url := range servers() {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			w, err := fleet.Open(ctx, url, fleet.RealTime(), fleet.Pool(64))
			require.NoError(t, err)
			t.Cleanup(w.Close)
			tap := fleet.NewTap(nil)
			rdb := w.Client(tap)
			before := time.Now()
			require.NoError(t, rdb.Set(ctx, "page:1", "one", 30*time.Second).Err())
			_, err = rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
				p.Set(ctx, "page:2", "two", 31*time.Second)
				p.Set(ctx, "page:3", "three", 0)
				return nil
			})
			require.NoError(t, err)
			require.NoError(t, rdb.Get(ctx, "page:1").Err())

			wrote := tap.Wrote()
			assert.Len(t, wrote, 3, "GET writes nothing")
			for _, k := range []string{"page:1", "page:2", "page:3"} {
				assert.False(t, wrote[k].Sent.Before(before), k)
				assert.False(t, wrote[k].Answered.Before(wrote[k].Sent), k)
			}
			sent, answered := tap.InFlight()
			assert.Equal(t, int64(0), sent)
			assert.GreaterOrEqual(t, answered, int64(3), "a SET, a pipeline and a GET (and the connection's own hello)")

			r, err := w.Read(ctx, nil)
			require.NoError(t, err)
			assert.Equal(t, map[string]string{"page:1": "one", "page:2": "two", "page:3": "three"}, r.Values)
			assert.Equal(t, time.Duration(-1), r.TTL["page:3"])
			for k, d := range map[string]time.Duration{"page:1": 30 * time.Second, "page:2": 31 * time.Second} {
				assert.LessOrEqual(t, r.TTL[k], d, k)
				lo := d - r.At[k].Answered.Sub(wrote[k].Sent) - time.Millisecond
				assert.GreaterOrEqual(t, r.TTL[k], lo, "%s: what is left is the time to live less the time between write and reading", k)
			}

			was, err := w.Evict(ctx, "page:1")
			require.NoError(t, err)
			assert.True(t, was)
			was, err = w.Evict(ctx, "page:1")
			require.NoError(t, err)
			assert.False(t, was, "gone already")
			require.NoError(t, w.Delete(ctx, "page:2", "page:3"))
			r, err = w.Read(ctx, nil)
			require.NoError(t, err)
			assert.Empty(t, r.TTL)
		})
	}
}

// A stage sees a single command before it is sent, with the shop's own
// key names, and once answered, with its error; a pipeline a fault
// refuses is not sent, and every command of it gets the error.
func TestStageAndARefusedPipeline(t *testing.T) {
	ctx := context.Background()
	w, err := fleet.Open(ctx, "")
	require.NoError(t, err)
	t.Cleanup(w.Close)
	tap := fleet.NewTap(nil)
	var before, after atomic.Int32
	tap.Stage(func(_ context.Context, cmd redis.Cmder, answered bool) {
		if fleet.ArgString(cmd.Args()[0]) != "get" {
			return
		}
		if answered {
			assert.ErrorIs(t, cmd.Err(), redis.Nil)
			after.Add(1)
			return
		}
		assert.Equal(t, "page:9", fleet.ArgString(cmd.Args()[1]))
		before.Add(1)
	})
	refused := errors.New("READONLY")
	tap.Fail(func(c fleet.Command) bool { return c.Name == "set" }, refused, -1)
	rdb := w.Client(tap)

	assert.ErrorIs(t, rdb.Get(ctx, "page:9").Err(), redis.Nil)
	assert.Equal(t, int32(1), before.Load())
	assert.Equal(t, int32(1), after.Load())

	cmds, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.Get(ctx, "page:1")
		p.Set(ctx, "page:1", "v", time.Second)
		return nil
	})
	assert.ErrorIs(t, err, refused)
	for _, c := range cmds {
		assert.ErrorIs(t, c.Err(), refused, "%v", c.Args())
	}
	assert.Equal(t, int32(1), before.Load(), "a pipeline's commands are not staged")
}

// On a real server, two shops' writes to one key, side by side, leave it
// held with the time to live of the last write that made it: never with
// the hour a held key carries and no scene time to age it. (A DEL's hold
// that found the key gone once forgot the key after the next SET's hold
// had recorded it, so the lock lived an hour: a flake of case 6's
// fails-fast on the real server, 1 run in 30.)
func TestHoldStillSideBySide(t *testing.T) {
	url := fleet.ServerURL()
	if url == "" {
		t.Skip("holding keys still is a real server's: set REDIS_URL")
	}
	ctx := context.Background()
	w, err := fleet.Open(ctx, url, fleet.Pool(8))
	require.NoError(t, err)
	t.Cleanup(w.Close)
	deleter, setter := w.Client(fleet.NewTap(nil)), w.Client(fleet.NewTap(nil))
	for round := range 10000 {
		var wg sync.WaitGroup
		wg.Add(2)
		go func() { defer wg.Done(); deleter.Del(ctx, "lock") }()
		go func() { defer wg.Done(); setter.SetNX(ctx, "lock", round, 3*time.Second) }()
		wg.Wait()
		keys, err := w.Keys(ctx)
		require.NoError(t, err)
		for _, k := range keys {
			require.LessOrEqual(t, k.TTL, 3*time.Second, "round %d: %s lives %v in the scene", round, k.Name, k.TTL)
		}
	}
}
