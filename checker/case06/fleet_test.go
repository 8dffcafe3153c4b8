package case06

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"stampede/checker/fleet"
	"stampede/checker/harness"
	"stampede/checker/shelves"
	"stampede/shop/catalog"
	"stampede/shop/clock"
)

// probeShop is a shop that, on every visit, sleeps a long step on the
// shops' clock and then looks at a key that was given exactly that step
// plus a little to live: a shop woken by a move of the clock must find
// Redis's clock already moved, so the key has at most the little left.
type probeShop struct {
	rdb  *redis.Client
	clk  clock.Clock
	step time.Duration
}

func (s *probeShop) Top(ctx context.Context, shelf string) ([]string, error) {
	key := "probe:" + shelf
	if err := s.rdb.Set(ctx, key, "x", s.step+time.Second).Err(); err != nil {
		return nil, err
	}
	if err := s.clk.Sleep(ctx, s.step); err != nil {
		return nil, err
	}
	ttl, err := s.rdb.PTTL(ctx, key).Result()
	if err != nil {
		return nil, err
	}
	if ttl > time.Second {
		return nil, fmt.Errorf("woken after %v, %s has %v to live: Redis's clock has not moved yet", s.step, key, ttl)
	}
	// A lock taken now lives its 2 s from now, on Redis's clock too.
	if err := s.rdb.SetNX(ctx, "lock:"+shelf, "me", 2*time.Second).Err(); err != nil {
		return nil, err
	}
	if err := s.clk.Sleep(ctx, 50*time.Millisecond); err != nil {
		return nil, err
	}
	if n, err := s.rdb.Exists(ctx, "lock:"+shelf).Result(); err != nil || n != 1 {
		return nil, errors.Join(err, errors.New("a lock of 2 s is gone 50 ms after it was taken"))
	}
	return []string{"ok"}, nil
}

// TestRedisMovesBeforeTheShopsWake holds Drive and Elapse to their order:
// Redis's clock first, then the shops'. In the other order a shop woken by
// a 30 s step can write a key before Redis's clock moves, and the move then
// ages it by the whole step (case 9's reference solution read a shelf
// twice at once on a loaded machine: its lock was gone). The shops look
// the moment they wake, many times, side by side.
func TestRedisMovesBeforeTheShopsWake(t *testing.T) {
	t.Setenv(fleet.URLVar, "")
	h := harness.New(context.Background(), "stampede/checker/case06", harness.DefaultBound)
	g, _ := holdEvery()
	g.every.Open()
	f, err := newFleet(h, func(_ *catalog.DB, rdb *redis.Client, clk clock.Clock) shelves.Shop {
		return &probeShop{rdb: rdb, clk: clk, step: 30 * time.Second}
	}, 4, g)
	require.NoError(t, err)
	defer f.Close()
	for round := range 10 {
		c := f.visit(40, func(ctx context.Context, i int) ([]string, error) {
			return f.shops[i%len(f.shops)].Top(ctx, fmt.Sprintf("shelf-%d-%d", round, i))
		})
		if round%2 == 0 {
			require.NoError(t, f.Drive(c.Done, time.Minute))
		} else {
			require.NoError(t, f.Elapse(31*time.Second))
		}
		for i, o := range c.Outcomes() {
			require.True(t, o.Returned, "visitor %d of round %d", i, round)
			assert.NoError(t, o.Err, "visitor %d of round %d", i, round)
		}
	}
}
