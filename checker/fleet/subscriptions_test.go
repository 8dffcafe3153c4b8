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

// next returns the next message of a subscription, or fails the test
// after a generous wait: a message on an embedded server is in-process.
func next(t *testing.T, ch <-chan any) any {
	t.Helper()
	select {
	case m := <-ch:
		return m
	case <-time.After(10 * time.Second):
		t.Fatal("no message on the subscription")
		return nil
	}
}

// A cut subscription misses what is published while it is down, and
// subscribes anew, saying so, once its reconnect lets it dial; Received
// counts what reached it.
func TestCutDropsASubscriptionUntilItsReconnect(t *testing.T) {
	s, tap, rdb := stage(t)
	ctx := context.Background()
	channel := s.World.Channel("prices")
	sub := rdb.Subscribe(ctx, channel)
	defer sub.Close()
	ch := sub.ChannelWithSubscriptions()
	first := next(t, ch)
	require.IsType(t, &redis.Subscription{}, first)
	assert.Equal(t, 1, tap.Subscriptions())
	assert.Equal(t, []string{channel}, tap.Channels())
	before := tap.Received()

	publisher := s.World.Client(fleet.NewTap(nil))
	n, err := publisher.Publish(ctx, channel, "one").Result()
	require.NoError(t, err)
	assert.EqualValues(t, 1, n)
	assert.Equal(t, "one", next(t, ch).(*redis.Message).Payload)
	assert.Greater(t, tap.Received(), before)

	closed, reconnect := tap.Cut()
	assert.Equal(t, 1, closed)
	require.NoError(t, s.Settle())
	assert.Equal(t, 0, tap.Subscriptions())
	n, err = publisher.Publish(ctx, channel, "lost").Result()
	require.NoError(t, err)
	assert.EqualValues(t, 0, n, "nobody is subscribed while the cut holds the dial")

	reconnect()
	again := next(t, ch)
	require.IsType(t, &redis.Subscription{}, again, "the first message after the cut is the new subscription, not the lost one")
	assert.Equal(t, "subscribe", again.(*redis.Subscription).Kind)
	n, err = publisher.Publish(ctx, channel, "two").Result()
	require.NoError(t, err)
	assert.EqualValues(t, 1, n)
	assert.Equal(t, "two", next(t, ch).(*redis.Message).Payload)
	assert.Equal(t, []string{channel, channel}, tap.Channels(), "subscribed again, to the same channel")
}

// A held message has reached the instance (Received counts it) but waits
// in the tap; let go, it is on the subscription's channel.
func TestHoldMessagesHandsOnWhenReleased(t *testing.T) {
	s, tap, rdb := stage(t)
	ctx := context.Background()
	channel := s.World.Channel("prices")
	sub := rdb.Subscribe(ctx, channel)
	defer sub.Close()
	ch := sub.ChannelWithSubscriptions()
	require.IsType(t, &redis.Subscription{}, next(t, ch))

	held := tap.HoldMessages()
	before := tap.Received()
	publisher := s.World.Client(fleet.NewTap(nil))
	require.NoError(t, publisher.Publish(ctx, channel, "one").Err())
	for !held.Reached() {
		time.Sleep(time.Millisecond)
	}
	assert.Greater(t, tap.Received(), before)
	select {
	case m := <-ch:
		t.Fatalf("a held message was handed on: %v", m)
	case <-time.After(50 * time.Millisecond):
	}
	held.Release()
	assert.Equal(t, "one", next(t, ch).(*redis.Message).Payload)
}
