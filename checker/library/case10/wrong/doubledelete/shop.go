// Package doubledelete is a known-wrong answer to case 10: the delayed
// double delete, presented as the fix for the stale set. The write deletes
// before and after its commit and again 500 ms later. A read slower than
// the delay still stores the old price after the last delete, and until
// the second delete comes every visitor is served the old price: the
// delay is a guess that narrows the window and does not close it. And
// nothing stops the stampede.
package doubledelete

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

const (
	priceTTL = 30 * time.Second // how long a price lives in Redis
	// secondDelete is how long after the commit the second delete comes:
	// longer than a read takes.
	secondDelete = 500 * time.Millisecond
)

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
	// Delayed double delete: once before the write, once after it, and
	// once more a moment later, to catch a slow read that stored the old
	// price in between.
	if err := s.rdb.Del(ctx, priceKey(book)).Err(); err != nil {
		return fmt.Errorf("shop: invalidating %s: %w", book, err)
	}
	if _, err := s.db.SetPrice(ctx, book, price); err != nil {
		return err
	}
	if err := s.rdb.Del(ctx, priceKey(book)).Err(); err != nil {
		return fmt.Errorf("shop: invalidating %s: %w", book, err)
	}
	go func() {
		ctx := context.WithoutCancel(ctx)
		if s.clock.Sleep(ctx, secondDelete) == nil {
			s.rdb.Del(ctx, priceKey(book))
		}
	}()
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

func priceKey(book string) string { return "price:{" + book + "}" }
