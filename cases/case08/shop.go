// Package case08 is case 8 of the stampede lab: keys set together expire
// together, and the cold start.
//
// Read docs/08-jittered-ttls.md first. Then:
//
//	go run ./shop run 8     watch 2,000 event pages expire in the same instant
//	go run ./shop check 8   grade your fix
//
// Both run on an embedded Redis (miniredis). To use a real Redis or Valkey
// server, add --redis redis://localhost:6379/0 to either, or set REDIS_URL.
//
// The box office caches each event's page in Redis. At deploy, WarmUp fills
// every page; after that, Page serves them and rebuilds a page that is
// missing. Two things go wrong. Every page is stored for exactly 30 s, so the
// pages the warm-up set together all expire together, 30 s later, and their
// rebuilds land on the database at once. And when Redis restarts empty,
// every reader of every page queries the database at the same moment, with
// nothing to say "one query per page" or "no more than the database's pool
// of 20 at once".
//
// What the checker relies on:
//   - Keep New's signature, WarmUp's and Page's.
//   - Every page written to Redis lives 30 s plus a random 0 to 5 s, drawn
//     for each page (the warm-up's and the rebuilds' alike).
//   - Wait only on the clock New is given (clk.Sleep, clk.Now, or
//     clock.WithTimeout(ctx, clk, d)), never with time.Sleep, time.After or
//     context.WithTimeout: the checker moves that clock by hand.
//   - A reader who has waited past its budget (a second or so, at most
//     10 s) gets a *TryAgain error, with a delay drawn for that reader
//     alone, spread over half a second or more: readers refused together
//     must not all come back at the same instant.
//   - A rebuild that runs on for readers who have left gives up within
//     10 s of the shop's clock, its wait for a connection and its query
//     alike; a page the database gave is served even when Redis will not
//     store it.
//   - A query may fail, or panic (a driver's bug): either way its readers
//     get an error, the next reader of the page queries again, and the
//     rebuild gives back what it took (case 5's lesson).
//   - A Redis error is not a miss: while Redis fails, a page's readers
//     must not each query the database (at most one query a second).
package case08

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"stampede/shop/clock"
	"stampede/shop/events"
)

// pageTTL is how long a page lives in Redis.
const pageTTL = 30 * time.Second

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
	if err := s.rdb.Set(ctx, key(id), page, pageTTL).Err(); err != nil {
		return fmt.Errorf("shop: writing event %d to Redis: %w", id, err)
	}
	return nil
}

func key(id int) string { return "event:" + strconv.Itoa(id) }
