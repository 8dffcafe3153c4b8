// Package case10 is case 10 of the stampede lab: the stale set.
//
// Read docs/10-stale-set.md first. Then:
//
//	go run ./shop run 10     watch three races leave an old price in Redis
//	go run ./shop check 10   grade your fix
//
// Both run on an embedded Redis (miniredis). To use a real Redis or Valkey
// server, add --redis redis://localhost:6379/0 to either, or set REDIS_URL.
//
// Until now the cache only had to spare the database. This shop also
// writes: SetPrice changes a book's price in the database, and Price reads
// it through Redis (cache-aside). A cache that is wrong after a write stays
// wrong for a whole time to live. As shipped, the write path deletes the
// key before its transaction commits and sets the new price after it, and
// a slow read can put the old price back either way. Make every write end
// with the committed price or nothing in Redis, whatever the reads are
// doing: delete after the commit, and give each miss a lease in Redis that
// the delete ends, so that a fill whose lease was ended is refused.
//
// What the checker relies on:
//   - Keep New's signature, Price's, SetPrice's and Relay's. Prices are in
//     cents.
//   - Wait only on the clock New is given (clk.Sleep and clk.Now), never
//     with time.Sleep, time.After or a ticker: the checker moves that clock
//     by hand, and moves Redis's clock with it.
//   - A visitor who has waited past its budget (a second or so, at most
//     10 s) for another instance's fill gets a *TryAgain error, and so
//     does one whose fills keep being refused: the budget holds on every
//     path. Its delay is drawn for that visitor alone, spread over half a
//     second or more: visitors refused together must not all come back at
//     the same instant.
//   - An instance's visitors who ask for one book while it is being
//     filled share one wait (a flight, as in cases 1 to 6): the instance
//     sends Redis about as many commands for 20 of them as for one. One
//     who leaves ends the wait for none of the others; once the last has
//     left, the next visitor starts afresh. Poll with some jitter (say 25
//     to 75 ms), so that instances that missed together do not poll
//     together, and let each visitor wait its whole budget, even one who
//     joined a wait that began before it came.
//   - A filler that gives up (its visitor left or ran out of time, or
//     Redis failed) lets its lease go at once, so that the next visitor
//     need not wait it out. After a failed read of the row it may keep it
//     a moment (half a second at most) as a backoff: while the database
//     fails, the fleet as a whole reads it at most a few times a second,
//     not once per visitor.
//   - A commit stands even if the visitor leaves during it: the write's
//     delete after the commit must reach Redis all the same.
//   - Work that goes on after its visitor has left (that delete, letting
//     a lease go, a pass of the relay below) has a deadline of its own, of
//     a few seconds: a Redis command may stall on the network, and must
//     not hold a goroutine and a connection for good.
//   - Even if the writer's instance dies right after its commit: each
//     commit also leaves a row in the database's outbox (db.Pending), and
//     Relay, which the server runs on every instance until its ctx ends,
//     sends each row's delete and only then marks the row sent
//     (db.MarkSent). It looks about every 100 ms (never more often than
//     every 50 ms), so that the delete reaches Redis within a second of
//     the commit though the writer is gone; tries a failed delete again
//     (within a second or so); and returns once its ctx has ended.
//   - On a bad day the database is slow: a read of the row may take up to
//     5 s, and its answer up to 10 ms more on its way, and a fill that
//     waited that long must still be stored, even if one Redis command
//     sent meanwhile failed. A read with no answer after 20 s will not
//     end: give it up by then, and let the lease go.
//   - Every key you write to Redis has a time to live, given in the same
//     step (one command, one script, or MULTI/EXEC); a lease's is more than
//     a read and at most 10 s, a price's at most a minute.
//   - Pass a script's keys in KEYS, and use the everyday commands (GET,
//     SET, DEL, EVAL, ...): on a real server the checker puts every key
//     under a namespace of its own.
//   - A command, script or MULTI that names several keys names keys of one
//     hash slot, as Redis Cluster requires: give them one hash tag.
package case10

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"stampede/shop/catalog"
	"stampede/shop/clock"
)

// priceTTL is how long a price lives in Redis.
const priceTTL = 30 * time.Second

// TryAgain is the answer for a visitor who waited longer than its budget
// for a fill: come back in a moment (an HTTP handler would send 503 with a
// Retry-After header), as in cases 6, 8 and 9.
type TryAgain struct {
	After time.Duration
}

func (e *TryAgain) Error() string {
	return fmt.Sprintf("the price is being filled; try again in %v", e.After)
}

// RetryAfter says when to try again.
func (e *TryAgain) RetryAfter() time.Duration { return e.After }

// Shop is one instance of the shop. Every instance shares the database and
// the Redis behind its client.
type Shop struct {
	db    *catalog.DB
	rdb   *redis.Client
	clock clock.Clock
}

// New returns an instance of the shop in a fleet that shares the database
// db and the Redis behind rdb. The instance waits and tells the time with
// clk.
func New(db *catalog.DB, rdb *redis.Client, clk clock.Clock) *Shop {
	return &Shop{db: db, rdb: rdb, clock: clk}
}

// Price returns a book's price in cents: from Redis, else from the
// database, which it then stores in Redis for the next visitor.
func (s *Shop) Price(ctx context.Context, book string) (int, error) {
	price, ok, err := s.cached(ctx, book)
	if err != nil || ok {
		return price, err
	}
	row, err := s.db.Row(ctx, book)
	if err != nil {
		return 0, err
	}
	if err := s.store(ctx, book, row.Price); err != nil {
		return 0, err
	}
	return row.Price, nil
}

// SetPrice changes a book's price.
func (s *Shop) SetPrice(ctx context.Context, book string, price int) error {
	// Out with the old price first, so that nobody reads it during the
	// write...
	if err := s.rdb.Del(ctx, priceKey(book)).Err(); err != nil {
		return fmt.Errorf("shop: invalidating %s: %w", book, err)
	}
	if _, err := s.db.SetPrice(ctx, book, price); err != nil {
		return err
	}
	// ...and in with the new one, so that the next visitor hits.
	return s.store(ctx, book, price)
}

// Relay is the instance's outbox relay: it runs until ctx ends. As
// shipped it sends nothing, so a writer that dies between its commit and
// its delete leaves the old price for a whole time to live.
func (s *Shop) Relay(ctx context.Context) error {
	<-ctx.Done()
	return nil
}

// cached reads a book's price from Redis.
func (s *Shop) cached(ctx context.Context, book string) (int, bool, error) {
	v, err := s.rdb.Get(ctx, priceKey(book)).Result()
	if errors.Is(err, redis.Nil) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("shop: reading %s from Redis: %w", book, err)
	}
	price, err := strconv.Atoi(v)
	if err != nil {
		return 0, false, fmt.Errorf("shop: decoding the price of %s: %w", book, err)
	}
	return price, true, nil
}

// store writes a book's price to Redis.
func (s *Shop) store(ctx context.Context, book string, price int) error {
	if err := s.rdb.Set(ctx, priceKey(book), price, priceTTL).Err(); err != nil {
		return fmt.Errorf("shop: writing %s to Redis: %w", book, err)
	}
	return nil
}

func priceKey(book string) string { return "price:" + book }
