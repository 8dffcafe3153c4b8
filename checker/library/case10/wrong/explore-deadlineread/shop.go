// Package deadlineread is a known-wrong answer to case 10: the reference,
// except that a visitor whose deadline passes while it waits for another
// instance's fill does not give up: the visitor wants an answer now, so it
// skips the queue and reads the row itself, detached from its context so
// that the read is not cut short. Its read runs beside the lease holder's,
// which is the stampede the lease exists to stop.
//
// The hand-built checks cancel contexts, and never give one a deadline.
//
// Verdict: fails "explore" only.
package deadlineread

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
	leaseTTL   = 2 * time.Second
	pollEvery  = 50 * time.Millisecond
	waitBudget = time.Second
)

// ErrConflict is what a fill gets when its lease was ended while it read
// the database.
var ErrConflict = errors.New("shop: the lease was ended before the fill")

// ErrBusy is what a visitor gets after waiting past its budget.
var ErrBusy = errors.New("shop: the price is being read by another instance; try again in a moment")

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

// Price returns a book's price in cents, from Redis or, under a lease,
// from the database.
func (s *Shop) Price(ctx context.Context, book string) (int, error) {
	deadline := s.clock.Now().Add(waitBudget)
	for {
		if price, ok, err := s.cached(ctx, book); err != nil || ok {
			return price, err
		}
		token := rand.Text()
		won, err := s.rdb.SetNX(ctx, leaseKey(book), token, leaseTTL).Result()
		if err != nil {
			return 0, fmt.Errorf("shop: taking the lease on %s: %w", book, err)
		}
		if won {
			price, err := s.fill(ctx, book, token)
			if errors.Is(err, ErrConflict) {
				continue
			}
			return price, err
		}
		if !s.clock.Now().Before(deadline) {
			return 0, ErrBusy
		}
		if err := s.clock.Sleep(ctx, pollEvery); err != nil {
			if errors.Is(err, context.DeadlineExceeded) {
				// Out of time: answer from the database rather than
				// with an error. Nothing is stored, as we hold no lease.
				row, err := s.db.Row(context.WithoutCancel(ctx), book)
				if err != nil {
					return 0, err
				}
				return row.Price, nil
			}
			return 0, err
		}
	}
}

func (s *Shop) fill(ctx context.Context, book, token string) (int, error) {
	if price, ok, err := s.cached(ctx, book); err != nil || ok {
		return price, err
	}
	row, err := s.db.Row(ctx, book)
	if err != nil {
		return 0, err
	}
	stored, err := fillIfLeased.Run(ctx, s.rdb, []string{priceKey(book), leaseKey(book)},
		token, row.Price, priceTTL.Milliseconds()).Int()
	if err != nil {
		return 0, fmt.Errorf("shop: storing %s in Redis: %w", book, err)
	}
	if stored == 0 {
		return 0, ErrConflict
	}
	return row.Price, nil
}

var fillIfLeased = redis.NewScript(`
if redis.call("GET", KEYS[2]) ~= ARGV[1] then
	return 0
end
redis.call("SET", KEYS[1], ARGV[2], "PX", ARGV[3])
redis.call("DEL", KEYS[2])
return 1`)

// SetPrice changes a book's price: the transaction, then the delete.
func (s *Shop) SetPrice(ctx context.Context, book string, price int) error {
	if _, err := s.db.SetPrice(ctx, book, price); err != nil {
		return err
	}
	if err := s.rdb.Del(ctx, priceKey(book), leaseKey(book)).Err(); err != nil {
		return fmt.Errorf("shop: invalidating %s after the commit: %w", book, err)
	}
	return nil
}

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

func priceKey(book string) string { return "price:{" + book + "}" }

func leaseKey(book string) string { return "lease:{" + book + "}" }
