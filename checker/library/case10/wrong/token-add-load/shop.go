// Package tokenaddload is a known-wrong answer to case 10, written by a
// helper who never read the checker (kept as an escape, c10-token-add-load,
// until switches caught it):
// the delete after the commit, leases ended by that delete, and fills
// checked against the lease's token in one script, all right; but each
// visitor draws its own lease token as the instance's random prefix and a
// count, added to and read back in two steps (newToken). Two visitors of
// one instance at once can both add before either reads, and get one
// token. The first takes the lease and reads the old row; a write ends
// its lease; the second takes the lease anew under the same token; the
// first fill finds that token in the lease and stores the old price, and
// the second fill, its lease gone, leaves it there for its time to live.
// Only two statements apart, the gap needs a schedule: switches plays it.
//
// Written before the outbox and the faults of the later checks, it also
// has no Relay, polls once per visitor, and gives its read no deadline.
package tokenaddload

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"stampede/shop/catalog"
	"stampede/shop/clock"
)

const (
	// priceTTL is the floor of correctness: a write whose delete never
	// reaches Redis (the instance died just after the commit) leaves the old
	// price for at most this long.
	priceTTL = 30 * time.Second
	// leaseTTL bounds how long a filler that died holds everyone else up.
	// It outlasts a healthy read (0.2 s) by far, so that a live filler
	// does not lose its lease to the clock.
	leaseTTL = 2 * time.Second
	// A visitor who finds the lease taken polls for the holder's fill about
	// every pollEvery, and gives up after waitBudget, telling its visitor
	// to come back after retryAfter.
	pollEvery  = 50 * time.Millisecond
	waitBudget = time.Second
	retryAfter = time.Second
)

// ErrConflict is what a fill gets when its lease was ended while it read
// the database: a write committed meanwhile, or the lease expired and
// another filler took over. What it read may be old, so it is not stored;
// the filler reads again.
var ErrConflict = errors.New("shop: the lease was ended before the fill")

// TryAgain is what a visitor gets past its budget: another instance was
// filling the price, or every fill of its own was refused by a write. The
// name and the method are those of cases 6, 8 and 9, so that the server's
// handler can turn any of them into a 503 with its Retry-After.
type TryAgain struct {
	After time.Duration
}

func (e *TryAgain) Error() string {
	return fmt.Sprintf("shop: the price is being filled; try again in %v", e.After)
}

// RetryAfter says when to try again.
func (e *TryAgain) RetryAfter() time.Duration { return e.After }

// Shop is one instance of the shop.
type Shop struct {
	db    *catalog.DB
	rdb   *redis.Client
	clock clock.Clock

	// A lease token is this instance's random prefix and a count: unique
	// across the fleet (the prefix comes from crypto/rand, drawn at start),
	// and within the instance (the count), with no call to crypto/rand per
	// miss.
	prefix string
	leases atomic.Uint64
}

// New returns an instance of the shop in a fleet that shares the database
// db and the Redis behind rdb. The instance waits and tells the time with
// clk.
func New(db *catalog.DB, rdb *redis.Client, clk clock.Clock) *Shop {
	return &Shop{db: db, rdb: rdb, clock: clk, prefix: rand.Text()}
}

// Price returns a book's price in cents, from Redis or, under a lease,
// from the database.
func (s *Shop) Price(ctx context.Context, book string) (int, error) {
	deadline := s.clock.Now().Add(waitBudget)
	// The token tells this visitor's lease from every other, so that its
	// fill can tell whether the lease is still its own.
	token := s.newToken()
	for {
		if price, ok, err := s.cached(ctx, book); err != nil || ok {
			return price, err
		}
		won, err := s.rdb.SetNX(ctx, leaseKey(book), token, leaseTTL).Result()
		if err != nil {
			return 0, fmt.Errorf("shop: taking the lease on %s: %w", book, err)
		}
		if won {
			price, err := s.fill(ctx, book, token)
			if err == nil {
				return price, nil
			}
			if !errors.Is(err, ErrConflict) {
				// The read failed or its visitor left: nobody will fill
				// under this lease, so let the others read at once rather
				// than wait out its time to live.
				s.letGo(ctx, book, token)
				return 0, err
			}
			// A write came between: read again at once, but within the
			// same budget, or writes faster than reads would keep this
			// visitor reading for as long as they last.
			if !s.clock.Now().Before(deadline) {
				return 0, &TryAgain{After: retryAfter}
			}
			continue
		}
		// Someone else reads the database: wait for its fill, or for its
		// lease to end, and look again.
		if !s.clock.Now().Before(deadline) {
			return 0, &TryAgain{After: retryAfter}
		}
		if err := s.clock.Sleep(ctx, pollEvery); err != nil {
			return 0, err
		}
	}
}

// newToken returns a lease token no other filler holds: the instance's
// prefix and the next count.
func (s *Shop) newToken() string {
	s.leases.Add(1)
	return s.prefix + "-" + strconv.FormatUint(s.leases.Load(), 36)
}

// fill reads the row under the lease token and stores its price, unless
// the lease has been ended meanwhile.
func (s *Shop) fill(ctx context.Context, book, token string) (int, error) {
	// Second look: the previous holder may have filled the price between
	// our miss and our lease. Then nobody will fill under this lease:
	// let it go, or once the price is evicted the fleet waits it out.
	price, ok, err := s.cached(ctx, book)
	if err != nil {
		return 0, err
	}
	if ok {
		s.letGo(ctx, book, token)
		return price, nil
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

// letGo ends the caller's lease after a fill that failed. It runs on a
// context of its own, since the visitor's may be why the fill failed (it
// left, or its deadline passed), and gives up once the lease would have
// expired anyway. The script leaves a lease that is no longer the
// caller's: its own may have expired and another filler taken over.
func (s *Shop) letGo(ctx context.Context, book, token string) {
	ctx, cancel := clock.WithTimeout(context.WithoutCancel(ctx), s.clock, leaseTTL)
	defer cancel()
	// Best effort: if Redis cannot be reached now, the lease's time to
	// live ends it.
	_ = deleteIfLeased.Run(ctx, s.rdb, []string{leaseKey(book)}, token).Err()
}

// deleteIfLeased deletes the lease only if it still holds the caller's
// token, in one step.
var deleteIfLeased = redis.NewScript(`
if redis.call("GET", KEYS[1]) == ARGV[1] then
	return redis.call("DEL", KEYS[1])
end
return 0`)

// fillIfLeased stores the price only if the lease still holds the caller's
// token, and ends the lease. The check and the store are one step: between
// a GET of the lease and a SET of the price, a write could commit and
// delete both, and the SET would put the old price back.
var fillIfLeased = redis.NewScript(`
if redis.call("GET", KEYS[2]) ~= ARGV[1] then
	return 0
end
redis.call("SET", KEYS[1], ARGV[2], "PX", ARGV[3])
redis.call("DEL", KEYS[2])
return 1`)

// SetPrice changes a book's price: the transaction first, then the delete.
func (s *Shop) SetPrice(ctx context.Context, book string, price int) error {
	if _, err := s.db.SetPrice(ctx, book, price); err != nil {
		return err
	}
	// After the commit, never before: a read that misses before the
	// commit reads the old row. A delete, never a set: a set carries a
	// value, and a slower set of an older value can land after it. The
	// lease goes in the same command, so a filler that read before the
	// commit finds its lease gone and stores nothing.
	if err := s.rdb.Del(ctx, priceKey(book), leaseKey(book)).Err(); err != nil {
		// The price is committed; the cached one may be old for up to
		// priceTTL. Production code would also queue this delete in an
		// outbox row of the same transaction, to send it again.
		return fmt.Errorf("shop: invalidating %s after the commit: %w", book, err)
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

// A book's price and its lease share a hash tag, the part in braces, so
// that they lie in one hash slot: Redis Cluster, as most managed Redis
// runs, refuses a script or a DEL whose keys are in two (CROSSSLOT).
func priceKey(book string) string { return "price:{" + book + "}" }

func leaseKey(book string) string { return "lease:{" + book + "}" }
