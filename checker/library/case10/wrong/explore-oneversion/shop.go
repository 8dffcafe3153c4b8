// Package oneversion is a known-wrong answer to case 10: versioned
// compare-and-set with one high-water mark for the whole cache. The write
// path records the version it committed in "{price}:version" and deletes
// the price; a fill is stored only if the row it read is no older than
// that mark. With one book it is right: a fill that read before a commit
// carries an older version, and is refused. But versions are the rows'
// own, one count per book: once one book has been written, every other
// book's rows are older than the mark, and their fills are refused for
// good. Every visitor of those books reads the row.
//
// The hand-built checks write and read one book.
//
// Verdict: fails "explore" only.
package oneversion

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"stampede/shop/catalog"
	"stampede/shop/clock"
)

const (
	priceTTL   = 30 * time.Second
	markTTL    = time.Hour // outlives any fill in flight
	lockTTL    = 2 * time.Second
	pollEvery  = 50 * time.Millisecond
	waitBudget = time.Second
	markKey    = "{price}:version"
)

// ErrBusy is what a visitor gets after waiting past its budget.
var ErrBusy = errors.New("shop: the price is being refreshed; try again")

// Shop is one instance of the shop.
type Shop struct {
	db    *catalog.DB
	rdb   *redis.Client
	clock clock.Clock
}

// New returns an instance of the shop.
func New(db *catalog.DB, rdb *redis.Client, clk clock.Clock) *Shop {
	return &Shop{db: db, rdb: rdb, clock: clk}
}

// storeIfCurrent stores the price only if its version is no older than the
// last one a write recorded (compared as numbers).
var storeIfCurrent = redis.NewScript(`
local mark = tonumber(redis.call("GET", KEYS[2]) or "0")
if tonumber(ARGV[1]) < mark then
	return 0
end
redis.call("SET", KEYS[1], ARGV[2], "PX", ARGV[3])
return 1`)

// invalidate records the committed version and deletes the price, in one
// step.
var invalidate = redis.NewScript(`
local mark = tonumber(redis.call("GET", KEYS[2]) or "0")
if tonumber(ARGV[1]) > mark then
	redis.call("SET", KEYS[2], ARGV[1], "PX", ARGV[2])
end
redis.call("DEL", KEYS[1])
return 1`)

var release = redis.NewScript(`
if redis.call("GET", KEYS[1]) == ARGV[1] then
	return redis.call("DEL", KEYS[1])
end
return 0`)

// Price returns a book's price in cents.
func (s *Shop) Price(ctx context.Context, book string) (int, error) {
	deadline := s.clock.Now().Add(waitBudget)
	for {
		if price, ok, err := s.cached(ctx, book); err != nil || ok {
			return price, err
		}
		token := rand.Text()
		won, err := s.rdb.SetNX(ctx, "lock:"+book, token, lockTTL).Result()
		if err != nil {
			return 0, fmt.Errorf("shop: locking %s: %w", book, err)
		}
		if won {
			price, err := s.fill(ctx, book)
			release.Run(ctx, s.rdb, []string{"lock:" + book}, token)
			return price, err
		}
		if !s.clock.Now().Before(deadline) {
			return 0, ErrBusy
		}
		if err := s.clock.Sleep(ctx, pollEvery); err != nil {
			return 0, err
		}
	}
}

// fill reads the row and stores it unless a newer version was committed
// meanwhile. Either way the row it read is the visitor's answer: it was
// the truth when the read began.
func (s *Shop) fill(ctx context.Context, book string) (int, error) {
	row, err := s.db.Row(ctx, book)
	if err != nil {
		return 0, err
	}
	err = storeIfCurrent.Run(ctx, s.rdb, []string{"{price}:" + book, markKey},
		row.Version, row.Price, priceTTL.Milliseconds()).Err()
	if err != nil {
		return 0, fmt.Errorf("shop: storing %s: %w", book, err)
	}
	return row.Price, nil
}

// SetPrice changes a book's price: the transaction, then the mark and the
// delete.
func (s *Shop) SetPrice(ctx context.Context, book string, price int) error {
	row, err := s.db.SetPrice(ctx, book, price)
	if err != nil {
		return err
	}
	if err := invalidate.Run(ctx, s.rdb, []string{"{price}:" + book, markKey}, row.Version, markTTL.Milliseconds()).Err(); err != nil {
		return fmt.Errorf("shop: invalidating %s: %w", book, err)
	}
	return nil
}

func (s *Shop) cached(ctx context.Context, book string) (int, bool, error) {
	v, err := s.rdb.Get(ctx, "{price}:"+book).Result()
	if errors.Is(err, redis.Nil) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("shop: reading %s: %w", book, err)
	}
	price, err := strconv.Atoi(v)
	return price, err == nil, err
}
