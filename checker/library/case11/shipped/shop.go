// Package case11 is case 11 of the stampede lab: the near cache.
//
// Read docs/12-near-cache.md first. Then:
//
//	go run ./shop run 11     watch four servers tell visitors four prices
//	go run ./shop check 11   grade your fix
//
// Both run on an embedded Redis (miniredis). To use a real Redis or Valkey
// server, add --redis redis://localhost:6379/0 to either, or set REDIS_URL.
//
// One Redis key for a bestseller takes every read of the fleet. So each
// instance keeps a copy of the prices it has read, in its own memory, in
// front of Redis: a hit there costs no round trip and no Redis command.
// The Redis layer below it is right (this file's redisPrice and
// storeNewer, as case 10 taught: a write leaves a tombstone after its
// commit, and a fill older than what Redis holds is refused). The copy is
// not: after a write, every other instance keeps serving the old price
// from memory until its copy expires. Keep every instance's copy in step:
// publish each write on the channel New is given, have Listen drop what
// the message makes old, make sure a fill that crossed a message does not
// store what it read before it, and forget everything when the
// subscription starts again, since messages sent while it was down are
// lost.
//
// What the checker relies on:
//   - Keep New's signature, Price's, SetPrice's and Listen's. Prices are
//     in cents.
//   - Wait only on the clock New is given (clk.Sleep and clk.Now), never
//     with time.Sleep, time.After or a ticker: the checker moves that clock
//     by hand, and moves Redis's clock with it.
//   - Listen is run by the server on every instance, before its first
//     visitor, until its ctx ends; then it returns. Every instance of a
//     fleet is given the same channel name: publish and subscribe on it
//     and no other.
//   - Once a write has returned and its message has reached every
//     instance, no instance serves a price older than the write's.
//     Messages may arrive late, and out of order.
//   - A commit stands even if the writer's visitor leaves during it: its
//     tombstone and its message must go out all the same.
//   - Until an instance's subscription is confirmed, it hears of no write:
//     keep nothing fetched before, or forget it all when the subscription
//     starts, the first time and every time after.
//   - A copy lives at most 10 s in an instance's memory from when it is
//     stored, message or not: the bound on what a lost message can cost.
//   - A visitor served from the instance's copy costs no Redis command and
//     waits for nothing, and the visitors of one instance who miss one
//     book at once share one read of Redis (and, if Redis misses too, one
//     read of the row); visitors of two books, two.
//   - Keep the Redis layer's rules: a price in Redis has a time to live
//     (at most a minute) given in the same step, and only storeNewer
//     writes it.
package case11

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"stampede/shop/catalog"
	"stampede/shop/clock"
)

const (
	// priceTTL is how long a price, or a write's tombstone, lives in Redis.
	priceTTL = 30 * time.Second
	// localTTL is how long an instance keeps its copy of a price.
	localTTL = 30 * time.Second
)

// Shop is one instance of the shop. Every instance shares the database,
// the Redis behind its client and the channel.
type Shop struct {
	db      *catalog.DB
	rdb     *redis.Client
	clock   clock.Clock
	channel string

	mu   sync.Mutex
	near map[string]copied // the instance's copies, by book
}

// copied is an instance's copy of a price.
type copied struct {
	price   int
	version int64
	expires time.Time
}

// New returns an instance of the shop in a fleet that shares the database
// db, the Redis behind rdb and the pub/sub channel named channel. The
// instance waits and tells the time with clk.
func New(db *catalog.DB, rdb *redis.Client, clk clock.Clock, channel string) *Shop {
	return &Shop{db: db, rdb: rdb, clock: clk, channel: channel, near: map[string]copied{}}
}

// Price returns a book's price in cents: from the instance's copy, else
// from Redis, else from the database.
func (s *Shop) Price(ctx context.Context, book string) (int, error) {
	s.mu.Lock()
	c, ok := s.near[book]
	s.mu.Unlock()
	if ok && s.clock.Now().Before(c.expires) {
		return c.price, nil
	}
	price, version, err := s.fetch(ctx, book)
	if err != nil {
		return 0, err
	}
	s.mu.Lock()
	s.near[book] = copied{price: price, version: version, expires: s.clock.Now().Add(localTTL)}
	s.mu.Unlock()
	return price, nil
}

// SetPrice changes a book's price: it commits the row, then puts the
// write's tombstone in Redis.
func (s *Shop) SetPrice(ctx context.Context, book string, price int) error {
	row, err := s.db.SetPrice(ctx, book, price)
	if err != nil {
		return err
	}
	return s.storeNewer(ctx, book, row.Version, "")
}

// Listen keeps the instance's copy in step with the fleet's writes, until
// ctx ends. As shipped it listens to nothing.
func (s *Shop) Listen(ctx context.Context) error {
	<-ctx.Done()
	return nil
}

// fetch reads a book's price and its row's version from Redis, and on a
// miss from the database, which it then offers to Redis.
func (s *Shop) fetch(ctx context.Context, book string) (int, int64, error) {
	price, version, ok, err := s.redisPrice(ctx, book)
	if err != nil || ok {
		return price, version, err
	}
	row, err := s.db.Row(ctx, book)
	if err != nil {
		return 0, 0, err
	}
	if err := s.storeNewer(ctx, book, row.Version, strconv.Itoa(row.Price)); err != nil {
		return 0, 0, err
	}
	return row.Price, row.Version, nil
}

// The Redis layer. A book's key holds "<version>:<price>", or a write's
// tombstone "<version>:" with no price, which a read takes for a miss.

// redisPrice reads a book's price and version from Redis; ok is false on a
// miss or a tombstone.
func (s *Shop) redisPrice(ctx context.Context, book string) (price int, version int64, ok bool, err error) {
	v, err := s.rdb.Get(ctx, priceKey(book)).Result()
	if errors.Is(err, redis.Nil) {
		return 0, 0, false, nil
	}
	if err != nil {
		return 0, 0, false, fmt.Errorf("shop: reading %s from Redis: %w", book, err)
	}
	ver, p, _ := strings.Cut(v, ":")
	if p == "" {
		return 0, 0, false, nil // a tombstone
	}
	version, err1 := strconv.ParseInt(ver, 10, 64)
	price, err2 := strconv.Atoi(p)
	if err := errors.Join(err1, err2); err != nil {
		return 0, 0, false, fmt.Errorf("shop: decoding the price of %s (%q): %w", book, v, err)
	}
	return price, version, true, nil
}

// storeNewer stores a book's price (or, with price "", a write's tombstone)
// at a row's version, unless Redis holds a newer version, or this one with
// its price. The check and the SET are one step: a script.
func (s *Shop) storeNewer(ctx context.Context, book string, version int64, price string) error {
	err := storeScript.Run(ctx, s.rdb, []string{priceKey(book)}, version, price, priceTTL.Milliseconds()).Err()
	if err != nil && !errors.Is(err, redis.Nil) {
		return fmt.Errorf("shop: writing %s to Redis: %w", book, err)
	}
	return nil
}

// storeScript sets KEYS[1] to "ARGV[1]:ARGV[2]" for ARGV[3] ms unless it
// holds a newer version, or the same version with a price.
var storeScript = redis.NewScript(`
local held = redis.call('GET', KEYS[1])
if held then
  local version, price = string.match(held, '^(%d+):(.*)$')
  version = tonumber(version)
  local mine = tonumber(ARGV[1])
  if version and (version > mine or (version == mine and price ~= '')) then
    return 0
  end
end
redis.call('SET', KEYS[1], ARGV[1] .. ':' .. ARGV[2], 'PX', ARGV[3])
return 1
`)

func priceKey(book string) string { return "price:" + book }
