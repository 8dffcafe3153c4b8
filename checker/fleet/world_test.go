package fleet_test

import (
	"context"
	"crypto/rand"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"stampede/checker/fleet"
	"stampede/checker/harness"
	"stampede/shop/catalog"
)

// stage opens an embedded World with one instance's client behind a Tap.
func stage(t *testing.T) (*fleet.Stage, *fleet.Tap, *redis.Client) {
	t.Helper()
	h := harness.New(context.Background(), "stampede/checker/fleet", harness.DefaultBound)
	w, err := fleet.Open(h.Context(), "")
	require.NoError(t, err)
	t.Cleanup(w.Close)
	s := &fleet.Stage{H: h, World: w, Clock: fleet.NewClock()}
	tap := fleet.NewTap(s.Clock.Now)
	return s, tap, w.Client(tap)
}

// A key ages with the scene's clock and nothing else, and expires when its
// time is up; a kept key keeps the time to live it was listed with.
func TestAdvanceAgesKeysWithTheScene(t *testing.T) {
	s, _, rdb := stage(t)
	ctx := context.Background()
	require.NoError(t, rdb.Set(ctx, "lock:a", "t", 2*time.Second).Err())
	require.NoError(t, rdb.Set(ctx, "shelf:a", "v", 30*time.Second).Err())
	require.NoError(t, rdb.Set(ctx, "forever", "v", 0).Err())

	require.NoError(t, s.World.Advance(ctx, 1500*time.Millisecond, nil))
	ttls, err := s.World.TTLs(ctx)
	require.NoError(t, err)
	assert.Equal(t, map[string]time.Duration{"lock:a": 500 * time.Millisecond, "shelf:a": 28500 * time.Millisecond, "forever": -1}, ttls)

	keys, err := s.World.Keys(ctx)
	require.NoError(t, err)
	require.Equal(t, "lock:a", keys[1].Name)
	require.NoError(t, s.World.Advance(ctx, 400*time.Millisecond, keys[1:2]))
	ttls, err = s.World.TTLs(ctx)
	require.NoError(t, err)
	assert.Equal(t, 500*time.Millisecond, ttls["lock:a"], "a kept key keeps its time to live")
	assert.Equal(t, 28100*time.Millisecond, ttls["shelf:a"])

	require.NoError(t, s.World.Advance(ctx, time.Second, nil))
	_, ok, err := s.World.Get(ctx, "lock:a")
	require.NoError(t, err)
	assert.False(t, ok, "its time is up")
	vals, err := s.World.Values(ctx)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"shelf:a": "v", "forever": "v"}, vals)
}

// Drive moves the clock, Redis's with it, until the condition holds; a
// condition that never holds ends at the limit with ErrNoBound, and a wait
// on nothing is a *harness.Stuck.
func TestDriveMovesBothClocks(t *testing.T) {
	s, _, rdb := stage(t)
	ctx := context.Background()
	require.NoError(t, rdb.Set(ctx, "lock:a", "t", 2*time.Second).Err())
	done := make(chan struct{})
	go func() { // a poller that waits for the lock to expire, 50 ms at a time
		defer close(done)
		for rdb.Exists(ctx, "lock:a").Val() == 1 {
			if s.Clock.Sleep(ctx, 50*time.Millisecond) != nil {
				return
			}
		}
	}()
	finished := func() bool {
		select {
		case <-done:
			return true
		default:
			return false
		}
	}
	require.NoError(t, s.Drive(finished, time.Minute))
	assert.Equal(t, 2*time.Second, s.Clock.Elapsed(), "the poller saw the lock go at its expiry, not later")

	var stuck *harness.Stuck
	assert.True(t, errors.As(s.Drive(func() bool { return false }, time.Second), &stuck), "nobody sleeps on the clock: nothing will ever move")
	assert.Equal(t, harness.Deadlocked, stuck.Cause)

	go func() { // a poller that never gives up
		for s.Clock.Sleep(ctx, 100*time.Millisecond) == nil {
		}
	}()
	start := s.Clock.Now()
	assert.ErrorIs(t, s.Drive(func() bool { return false }, time.Second), fleet.ErrNoBound)
	assert.Equal(t, time.Second, s.Clock.Now().Sub(start), "Drive gives up at its limit")
}

// A Tap logs what the shop sent by the shop's names, fails what Fail arms,
// and cancels the caller's context after what CancelAfter arms.
func TestTapFaults(t *testing.T) {
	_, tap, rdb := stage(t)
	ctx := context.Background()
	down := errors.New("READONLY You can't write against a read only replica")
	tap.Fail(func(c fleet.Command) bool { return c.Name == "set" }, down, 1)
	assert.ErrorIs(t, rdb.Set(ctx, "k", "v", time.Second).Err(), down)
	require.NoError(t, rdb.Set(ctx, "k", "v", time.Second).Err(), "one failure, then Redis again")

	call, cancel := fleet.WithCancel(ctx)
	defer cancel()
	tap.CancelAfter(func(c fleet.Command) bool { return c.Name == "get" })
	require.NoError(t, rdb.Get(call, "k").Err(), "the command itself is answered")
	assert.ErrorIs(t, call.Err(), context.Canceled, "and then the visitor is gone")

	var sent []fleet.Command // the shop's own commands, without the client's HELLO
	for _, c := range tap.Log() {
		if len(c.Keys) > 0 {
			sent = append(sent, c)
		}
	}
	require.Len(t, sent, 3)
	assert.Equal(t, "error: "+down.Error(), sent[0].Said)
	assert.Equal(t, "OK", sent[1].Said)
	assert.Equal(t, "v", sent[2].Reply)
	assert.Equal(t, fleet.Start(), sent[2].At)
}

// A hold that honours contexts lets its command fail when the caller's
// context ends, unsent.
func TestHoldUntilDone(t *testing.T) {
	_, tap, rdb := stage(t)
	setNX := func(c fleet.Command) bool { return c.Conditional() }
	h := tap.HoldUntilDone(setNX)
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan error, 1)
	go func() { got <- rdb.SetNX(ctx, "lock", "me", time.Second).Err() }()
	for !h.Reached() {
		time.Sleep(time.Millisecond)
	}
	assert.Equal(t, "set lock me ex 1 nx", h.Held())
	cancel()
	assert.ErrorIs(t, <-got, context.Canceled)
	n, err := rdb.Exists(context.Background(), "lock").Result()
	require.NoError(t, err)
	assert.Zero(t, n, "the held command was never sent")

}

// A paused instance sends nothing, from any goroutine, until resumed; the
// others reach Redis meanwhile.
func TestPause(t *testing.T) {
	s, tap, rdb := stage(t)
	other := s.World.Client(fleet.NewTap(s.Clock.Now))
	ctx := context.Background()
	resume := tap.Pause()
	got := make(chan error, 2)
	go func() { got <- rdb.Set(ctx, "lease", "frozen", time.Minute).Err() }()
	go func() { got <- rdb.Get(ctx, "lease").Err() }()
	waiting := func() (n int) { // the two commands, without the client's HELLO
		for _, c := range tap.Log() {
			if len(c.Keys) > 0 {
				n++
			}
		}
		return n
	}
	for waiting() < 2 {
		time.Sleep(time.Millisecond)
	}
	require.NoError(t, other.Set(ctx, "lease", "other", time.Minute).Err(), "the rest of the fleet goes on")
	v, ok, err := s.World.Get(ctx, "lease")
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, "other", v, "nothing of the paused instance arrived")
	select {
	case err := <-got:
		t.Fatalf("a paused command returned: %v", err)
	default:
	}
	resume()
	resume() // a second resume does nothing
	for range 2 {
		if err := <-got; err != nil {
			assert.ErrorIs(t, err, redis.Nil)
		}
	}
	require.NoError(t, rdb.Set(ctx, "after", "v", time.Minute).Err(), "resumed for good")
}

// A stepped clock is in step until stepped, then off by the steps.
func TestSteppedClock(t *testing.T) {
	c := fleet.NewClock()
	s := c.Steppable()
	assert.Equal(t, c.Now(), s.Now())
	s.Step(30 * time.Second)
	s.Step(-5 * time.Second)
	assert.Equal(t, c.Now().Add(25*time.Second), s.Now())
	c.Set(c.Now().Add(time.Second))
	assert.Equal(t, c.Now().Add(25*time.Second), s.Now(), "it runs with the scene's clock")
}

// A skewed clock is off by its offset and sleeps on the scene's clock.
func TestSkewedClock(t *testing.T) {
	c := fleet.NewClock()
	fast := c.Skewed(30 * time.Second)
	assert.Equal(t, fleet.Start().Add(30*time.Second), fast.Now())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.ErrorIs(t, fast.Sleep(ctx, time.Second), context.Canceled)
}

// The query faults strike the queries they are given, and only those.
func TestQueryFaults(t *testing.T) {
	ctx := context.Background()
	down := errors.New("connection refused")
	db := catalog.New(catalog.WithCost(0), catalog.WithHook(fleet.NthQuery(fleet.FailWith(down), 2)))
	_, err := db.Top(ctx, catalog.Bestsellers)
	require.NoError(t, err)
	_, err = db.Top(ctx, catalog.Bestsellers)
	assert.ErrorIs(t, err, down)
	_, err = db.Top(ctx, catalog.Bestsellers)
	require.NoError(t, err)

	over, end := context.WithCancel(ctx)
	end()
	assert.ErrorIs(t, fleet.Hang(over)(ctx, "x"), context.Canceled, "a hung query ends with the scene")
	assert.PanicsWithValue(t, "driver: nil connection", func() { _ = fleet.PanicWith("driver: nil connection")(ctx, "x") })
}

// A shop's PTTL and TTL tell a key's time to live in the scene, on the
// embedded server and on a real one (REDIS_URL), where the World holds
// every key still with an hour more than the scene gave it.
func TestShopsTimeToLiveIsTheScenes(t *testing.T) {
	for name, url := range servers() {
		t.Run(name, func(t *testing.T) {
			h := harness.New(context.Background(), "stampede/checker/fleet", harness.DefaultBound)
			w, err := fleet.Open(h.Context(), url)
			require.NoError(t, err)
			t.Cleanup(w.Close)
			s := &fleet.Stage{H: h, World: w, Clock: fleet.NewClock()}
			rdb := w.Client(fleet.NewTap(s.Clock.Now))
			ctx := context.Background()
			require.NoError(t, rdb.Set(ctx, "shelf:a", "v", 60*time.Second).Err())
			require.NoError(t, s.World.Advance(ctx, 35*time.Second, nil))

			pttl, err := rdb.PTTL(ctx, "shelf:a").Result()
			require.NoError(t, err)
			assert.InDelta(t, float64(25*time.Second), float64(pttl), float64(50*time.Millisecond), "PTTL")
			ttl, err := rdb.TTL(ctx, "shelf:a").Result()
			require.NoError(t, err)
			assert.InDelta(t, float64(25*time.Second), float64(ttl), float64(time.Second), "TTL")
			cmds, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
				p.Get(ctx, "shelf:a")
				p.PTTL(ctx, "shelf:a")
				return nil
			})
			require.NoError(t, err)
			assert.InDelta(t, float64(25*time.Second), float64(cmds[1].(*redis.DurationCmd).Val()), float64(50*time.Millisecond), "a pipeline's PTTL")
			missing, err := rdb.PTTL(ctx, "shelf:none").Result()
			require.NoError(t, err)
			assert.Equal(t, -2*time.Nanosecond, missing, "a missing key")
		})
	}
}

// TestStrays: a script that writes a key by a name from ARGV writes it
// outside a real server's namespace, where Keys never looks; Strays finds
// it, and deletes it. On the embedded server Keys sees it, and Strays
// reports none.
func TestStrays(t *testing.T) {
	for name, url := range servers() {
		t.Run(name, func(t *testing.T) {
			h := harness.New(context.Background(), "stampede/checker/fleet", harness.DefaultBound)
			w, err := fleet.Open(h.Context(), url)
			require.NoError(t, err)
			t.Cleanup(w.Close)
			rdb := w.Client(fleet.NewTap(nil))
			ctx := context.Background()
			bare := "stray:" + strings.ToLower(rand.Text()[:8])
			script := `redis.call("SET", ARGV[1], "v", "PX", 60000) return 1`
			require.NoError(t, rdb.Eval(ctx, script, []string{"named"}, bare).Err())
			strays, err := w.Strays(ctx, []string{bare, "stray:never-written"})
			require.NoError(t, err)
			keys, err := w.Keys(ctx)
			require.NoError(t, err)
			if w.Embedded() {
				assert.Empty(t, strays)
				assert.True(t, slices.ContainsFunc(keys, func(k fleet.Key) bool { return k.Name == bare }), "Keys sees it")
				return
			}
			assert.Equal(t, []string{bare}, strays)
			again, err := w.Strays(ctx, []string{bare})
			require.NoError(t, err)
			assert.Empty(t, again, "deleted once found")
		})
	}
}

// TestDisarmReleasesACaughtHold: Disarm lets go the command a hold has
// caught, as scenes' Close relies on, not only a hold still waiting.
func TestDisarmReleasesACaughtHold(t *testing.T) {
	h := harness.New(context.Background(), "stampede/checker/fleet", harness.DefaultBound)
	w, err := fleet.Open(h.Context(), "")
	require.NoError(t, err)
	t.Cleanup(w.Close)
	tap := fleet.NewTap(nil)
	rdb := w.Client(tap)
	hold := tap.Hold(func(fleet.Command) bool { return true })
	done := make(chan error, 1)
	go func() { done <- rdb.Set(context.Background(), "k", "v", time.Minute).Err() }()
	for !hold.Reached() {
		time.Sleep(time.Millisecond)
	}
	tap.Disarm()
	select {
	case err := <-done:
		assert.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("the held SET was never let go")
	}
}

// A held reply comes after Redis has run the command: the key is there
// while the caller still waits, and the caller gets the answer once let go.
func TestHoldReplyHoldsTheAnswerNotTheCommand(t *testing.T) {
	s, tap, rdb := stage(t)
	ctx := context.Background()
	h := tap.HoldReply(func(c fleet.Command) bool { return c.Name == "set" })
	got := make(chan error, 1)
	go func() { got <- rdb.Set(ctx, "k", "v", 0).Err() }()
	for !h.Reached() {
		time.Sleep(time.Millisecond)
	}
	assert.Equal(t, "set k v", h.Held())
	v, ok, err := s.World.Get(ctx, "k")
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, "v", v, "Redis ran the command before its answer was held")
	select {
	case err := <-got:
		t.Fatalf("the caller had its answer while it was held: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	h.Release()
	require.NoError(t, <-got)
}

// A command held on its way is run by Redis when let go, though its
// sender's context ended meanwhile, and its sender gets the answer; a
// plain Hold's command, let go the same way, is not sent.
func TestHoldSentRunsTheCommandWhateverItsContext(t *testing.T) {
	for _, onItsWay := range []bool{true, false} {
		s, tap, rdb := stage(t)
		set := func(c fleet.Command) bool { return c.Name == "set" }
		h := tap.Hold(set)
		if onItsWay {
			h = tap.HoldSent(set)
		}
		ctx, cancel := context.WithCancel(context.Background())
		got := make(chan error, 1)
		go func() { got <- rdb.Set(ctx, "k", "v", 0).Err() }()
		for !h.Reached() {
			time.Sleep(time.Millisecond)
		}
		cancel()
		select {
		case err := <-got:
			t.Fatalf("onItsWay %v: the sender had an answer while its command was held: %v", onItsWay, err)
		case <-time.After(20 * time.Millisecond):
		}
		h.Release()
		err := <-got
		_, ok, gerr := s.World.Get(context.Background(), "k")
		require.NoError(t, gerr)
		if onItsWay {
			assert.NoError(t, err, "the sender waits for the answer of a command it has written")
			assert.True(t, ok, "Redis ran the command let go, its sender's context ended or not")
		} else {
			assert.ErrorIs(t, err, context.Canceled)
			assert.False(t, ok, "a command held before it was sent goes with its sender's context")
		}
	}
}
