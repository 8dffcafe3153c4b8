package fleet_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"stampede/checker/fleet"
)

// A stall holds every command it matches until the context each was sent
// on ends, and counts those it holds; released, the rest go on to Redis.
func TestStallHoldsEachCommandUntilItsContextEnds(t *testing.T) {
	_, tap, rdb := stage(t)
	stall := tap.Stall(func(c fleet.Command) bool { return c.Name == "set" })
	defer stall.Release()
	ctx, cancel := context.WithCancel(context.Background())
	errs := make(chan error, 3)
	for range 3 {
		go func() { errs <- rdb.Set(ctx, "k", "v", time.Minute).Err() }()
	}
	for stall.Waiting() < 3 {
		time.Sleep(time.Millisecond)
	}
	require.ErrorIs(t, rdb.Get(context.Background(), "other").Err(), redis.Nil, "a command it does not match goes on")
	cancel()
	for range 3 {
		assert.ErrorIs(t, <-errs, context.Canceled)
	}
	assert.Equal(t, 0, stall.Waiting())
	stall.Release()
	require.NoError(t, rdb.Set(context.Background(), "k", "v", time.Minute).Err(), "released, the stall lets commands through")
}
