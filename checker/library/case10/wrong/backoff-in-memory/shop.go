// Package inmemorybackoff is a known-wrong answer to case 10, written
// blind by a helper in issue 25's second round of fault-kind answers: a
// lease with a keepalive, a read deadline and a fill refused once a write
// ends the lease, all right, but the backoff after a failed read is kept
// in each instance's memory (half a second) while the Redis lease is let
// go at once. Each instance backs off, not the fleet: N instances read a
// failing database about 2N times a second, and an outage grows into a
// stampede with the fleet. (On three instances, with the visitors shared
// among them, it read 28 times in 3 s and passed; on six, each with a
// visitor every 100 ms, 40 times in 2 s against the 26 allowed.)
//
// Verdict: fails "db-down"; and "slow-read", since its keepalive ends at
// the first renewal Redis refuses (the third blind round's
// keepalive-stops-on-error, the same mistake); and "outbox", written
// before the outbox, with no relay.
//
// The helper's own summary, which believes the backoff is the fleet's:
//
// My fix: cache-aside with leases in Redis.
//
//   - A miss takes a lease (SET lease:{book} <random token> NX PX 2000).
//     Only the holder reads the row; everybody else polls for the price
//     within a budget of a second and then gets a *TryAgain.
//   - While the holder reads, a keepalive renews the lease every third of
//     its time to live, with a script that renews it only while it still
//     holds the holder's token. The read has a deadline of its own (10 s).
//   - The fill is one script: store the price only if the lease still holds
//     our token, and end the lease in the same step.
//   - SetPrice commits, then deletes price and lease in one DEL, on a
//     context that outlives a visitor who hangs up.
//   - A filler that gives up lets its lease go at once (compare-and-delete);
//     after a failed read of the row it keeps it 250 ms as the fleet's
//     backoff from the database.
package inmemorybackoff

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"stampede/shop/catalog"
	"stampede/shop/clock"
)

const (
	// priceTTL is how long a price lives in Redis.
	priceTTL = 30 * time.Second
	// leaseTTL is how long a lease lives unless its holder renews it.
	leaseTTL = 2 * time.Second
	// renewEvery is how often a holder renews its lease while it reads.
	renewEvery = leaseTTL / 3
	// readTimeout is how long a read of the row may take before we give it
	// up: twice the slowest read the shop waits for (5 s).
	readTimeout = 10 * time.Second
	// backoff is how long a failed read's lease is kept, so that the fleet
	// reads a failing database a few times a second, not once per visitor.
	backoff = 500 * time.Millisecond
	// budget is how long a visitor waits for someone else's fill.
	budget = time.Second
	// pollEvery is how often a waiting visitor looks again.
	pollEvery = 50 * time.Millisecond
	// detachedTimeout bounds a Redis command sent on a detached context.
	detachedTimeout = 2 * time.Second
)

// Shop is one instance of the shop. Every instance shares the database and
// the Redis behind its client.
type Shop struct {
	db    *catalog.DB
	rdb   *redis.Client
	clock clock.Clock

	mu       sync.Mutex
	downTill map[string]time.Time // book -> no reads of its row before then
}

// New returns an instance of the shop in a fleet that shares the database
// db and the Redis behind rdb. The instance waits and tells the time with
// clk.
func New(db *catalog.DB, rdb *redis.Client, clk clock.Clock) *Shop {
	return &Shop{db: db, rdb: rdb, clock: clk, downTill: make(map[string]time.Time)}
}

// TryAgain is the answer for a visitor who waited longer than its budget
// for a fill: come back in a moment.
type TryAgain struct {
	After time.Duration
}

func (e *TryAgain) Error() string {
	return fmt.Sprintf("the price is being fetched; try again in %v", e.After)
}

// RetryAfter says when to try again.
func (e *TryAgain) RetryAfter() time.Duration { return e.After }

// fillScript stores the price only while the lease holds our token, and
// ends the lease in the same step.
// KEYS[1] price, KEYS[2] lease; ARGV[1] token, ARGV[2] price, ARGV[3] ttl ms.
var fillScript = redis.NewScript(`
if redis.call("GET", KEYS[2]) == ARGV[1] then
  redis.call("SET", KEYS[1], ARGV[2], "PX", ARGV[3])
  redis.call("DEL", KEYS[2])
  return 1
end
return 0
`)

// releaseScript ends the lease only while it holds our token.
// KEYS[1] lease; ARGV[1] token.
var releaseScript = redis.NewScript(`
if redis.call("GET", KEYS[1]) == ARGV[1] then
  return redis.call("DEL", KEYS[1])
end
return 0
`)

// expireScript gives the lease a new time to live only while it holds our
// token: the keepalive, and the backoff after a failed read.
// KEYS[1] lease; ARGV[1] token, ARGV[2] ttl ms.
var expireScript = redis.NewScript(`
if redis.call("GET", KEYS[1]) == ARGV[1] then
  return redis.call("PEXPIRE", KEYS[1], ARGV[2])
end
return 0
`)

// Price returns a book's price in cents: from Redis, else from the
// database, which it then stores in Redis for the next visitor.
func (s *Shop) Price(ctx context.Context, book string) (int, error) {
	deadline := s.clock.Now().Add(budget)
	for {
		price, ok, err := s.cached(ctx, book)
		if err != nil || ok {
			return price, err
		}
		if s.backingOff(book) {
			// The database failed a moment ago: wait like a visitor who
			// found the lease taken.
			if !s.clock.Now().Before(deadline) {
				return 0, &TryAgain{After: 500 * time.Millisecond}
			}
			if err := s.clock.Sleep(ctx, pollEvery); err != nil {
				return 0, err
			}
			continue
		}
		token := rand.Text()
		got, err := s.rdb.SetNX(ctx, leaseKey(book), token, leaseTTL).Result()
		if err != nil {
			return 0, fmt.Errorf("shop: taking the lease of %s: %w", book, err)
		}
		if got {
			price, filled, err := s.fill(ctx, book, token)
			if err != nil || filled {
				return price, err
			}
			// Refused: a write ended our lease. Try again within the budget.
		}
		if !s.clock.Now().Before(deadline) {
			return 0, &TryAgain{After: 500 * time.Millisecond}
		}
		if err := s.clock.Sleep(ctx, pollEvery); err != nil {
			return 0, err
		}
	}
}

// fill reads the row under the lease held with token and stores it. It
// reports whether the fill was stored (false: the lease was ended).
func (s *Shop) fill(ctx context.Context, book, token string) (int, bool, error) {
	// Second look: a fill may have landed between our miss and our lease.
	price, ok, err := s.cached(ctx, book)
	if err != nil || ok {
		s.release(ctx, book, token)
		return price, ok, err
	}

	readCtx, cancelRead := clock.WithTimeout(ctx, s.clock, readTimeout)
	keepCtx, stopKeep := context.WithCancel(readCtx)
	kept := make(chan struct{})
	go s.keepalive(keepCtx, book, token, kept)
	row, err := s.db.Row(readCtx, book)
	stopKeep()
	<-kept
	cancelRead()
	if err != nil {
		if ctx.Err() == nil {
			// The database failed (or hung past our deadline): back off
			// from it for a moment.
			s.mu.Lock()
			s.downTill[book] = s.clock.Now().Add(backoff)
			s.mu.Unlock()
		}
		s.release(ctx, book, token)
		return 0, false, err
	}

	n, err := fillScript.Run(ctx, s.rdb, []string{priceKey(book), leaseKey(book)},
		token, row.Price, priceTTL.Milliseconds()).Int()
	if err != nil {
		s.release(ctx, book, token)
		return 0, false, fmt.Errorf("shop: writing %s to Redis: %w", book, err)
	}
	if n == 0 {
		return 0, false, nil
	}
	return row.Price, true, nil
}

// backingOff reports whether this instance is backing off from the
// database for book.
func (s *Shop) backingOff(book string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.clock.Now().Before(s.downTill[book])
}

// keepalive renews the lease every third of its time to live while it
// still holds token, until ctx ends. It closes done when it returns.
func (s *Shop) keepalive(ctx context.Context, book, token string, done chan<- struct{}) {
	defer close(done)
	for {
		if err := s.clock.Sleep(ctx, renewEvery); err != nil {
			return
		}
		n, err := expireScript.Run(ctx, s.rdb, []string{leaseKey(book)},
			token, leaseTTL.Milliseconds()).Int()
		if err != nil || n == 0 {
			return // gone, or Redis failed: nothing more to renew
		}
	}
}

// release lets the lease go if it still holds token, on a context of its
// own: the visitor may have left.
func (s *Shop) release(ctx context.Context, book, token string) {
	dctx, cancel := clock.WithTimeout(context.WithoutCancel(ctx), s.clock, detachedTimeout)
	defer cancel()
	releaseScript.Run(dctx, s.rdb, []string{leaseKey(book)}, token)
}

// expire shortens the lease to d if it still holds token.
func (s *Shop) expire(ctx context.Context, book, token string, d time.Duration) {
	dctx, cancel := clock.WithTimeout(context.WithoutCancel(ctx), s.clock, detachedTimeout)
	defer cancel()
	expireScript.Run(dctx, s.rdb, []string{leaseKey(book)}, token, d.Milliseconds())
}

// SetPrice changes a book's price.
func (s *Shop) SetPrice(ctx context.Context, book string, price int) error {
	if _, err := s.db.SetPrice(ctx, book, price); err != nil {
		return err
	}
	// The commit stands whether or not our visitor is still there: the
	// delete belongs to it.
	dctx, cancel := clock.WithTimeout(context.WithoutCancel(ctx), s.clock, detachedTimeout)
	defer cancel()
	if err := s.rdb.Del(dctx, priceKey(book), leaseKey(book)).Err(); err != nil {
		return fmt.Errorf("shop: invalidating %s: %w", book, err)
	}
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

func priceKey(book string) string { return "price:{" + book + "}" }
func leaseKey(book string) string { return "lease:{" + book + "}" }
