// Package case08 is a known-wrong answer to case 8: the shipped shop with
// its jitter fixed and nothing else. Each page lives 30 s plus a random 0
// to 5 s, drawn for each write, and the expiry wave is gone. But a cold
// start still sends every reader of every page to the database at once:
// no single-flight, no bound, and so no reader ever waits, nor is turned
// away with a "try again".
//
// Verdict: fails "once", "at-most" and "slots-after-failure" (no bound
// at all, said so), "budget", "late-reader" and "starter-leaves" (nobody
// waits, so no budget and no wait for a slot can be tried), and "explore".
package case08

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"stampede/shop/clock"
	"stampede/shop/events"
)

// A page lives pageTTL plus a random part of up to ttlJitter, drawn for
// each write: pages stored together expire over 5 s, not in one instant.
const (
	pageTTL   = 30 * time.Second
	ttlJitter = 5 * time.Second
)

// Shop is the box office's page cache.
type Shop struct {
	db    *events.DB
	rdb   *redis.Client
	clock clock.Clock
}

// New returns a shop in front of the database db, caching in the Redis
// behind rdb, waiting and telling the time with clk.
func New(db *events.DB, rdb *redis.Client, clk clock.Clock) *Shop {
	return &Shop{db: db, rdb: rdb, clock: clk}
}

// TryAgain is the answer for a reader who waited longer than its budget for
// the page to be rebuilt: come back in a moment (an HTTP handler would send
// 503 with a Retry-After header).
type TryAgain struct {
	After time.Duration
}

func (e *TryAgain) Error() string {
	return fmt.Sprintf("the page is being rebuilt; try again in %v", e.After)
}

// RetryAfter says when to try again.
func (e *TryAgain) RetryAfter() time.Duration { return e.After }

// WarmUp fills the cache with the pages of the given events, before the
// shop takes traffic.
func (s *Shop) WarmUp(ctx context.Context, ids []int) error {
	for _, id := range ids {
		page, err := s.db.Page(ctx, id)
		if err != nil {
			return err
		}
		if err := s.store(ctx, id, page); err != nil {
			return err
		}
	}
	return nil
}

// Page returns an event's page: from Redis, or else from the database.
func (s *Shop) Page(ctx context.Context, id int) (string, error) {
	page, err := s.rdb.Get(ctx, key(id)).Result()
	if err == nil {
		return page, nil
	}
	if !errors.Is(err, redis.Nil) {
		return "", fmt.Errorf("shop: reading event %d from Redis: %w", id, err)
	}
	page, err = s.db.Page(ctx, id)
	if err != nil {
		return "", err
	}
	if err := s.store(ctx, id, page); err != nil {
		return "", err
	}
	return page, nil
}

// store writes a page to Redis.
func (s *Shop) store(ctx context.Context, id int, page string) error {
	if err := s.rdb.Set(ctx, key(id), page, pageTTL+rand.N(ttlJitter)).Err(); err != nil {
		return fmt.Errorf("shop: writing event %d to Redis: %w", id, err)
	}
	return nil
}

func key(id int) string { return "event:" + strconv.Itoa(id) }
