// Package case09 is case 9 of the stampede lab: serve stale while one
// rebuilds.
//
// Read docs/09-serve-stale.md first. Then:
//
//	go run ./shop run 9     watch the readers wait at every expiry
//	go run ./shop check 9   grade your fix
//
// Both run on an embedded Redis (miniredis). To use a real Redis or Valkey
// server, add --redis redis://localhost:6379/0 to either, or set REDIS_URL.
//
// This is case 6's fleet with its lock done right: one rebuild for the
// whole fleet, a token, an atomic release, a bounded wait. It is correct.
// But every 30 s the bestseller list expires in Redis, and every reader of
// that moment, on every instance, waits for the one rebuild. Keep the list
// in Redis for 60 s (its physical expiry) and call it stale 30 s after it
// was written (its logical expiry), on Redis's clock. A reader that finds
// a value past its logical expiry serves it at once, and one rebuild for
// the fleet runs in the background; only a reader that finds nothing waits.
//
// What the checker relies on:
//   - Keep New's signature, Top's and Invalidate's.
//   - Tell the time and wait only with the clock New is given (clk.Now and
//     clk.Sleep), never with time.Now, time.Sleep, time.After or a ticker:
//     the checker moves that clock by hand, and Redis's clock with it.
//   - A visitor who found nothing and waited past its budget (a second or
//     so, at most 10 s) gets a *TryAgain error, with a delay drawn for that
//     visitor alone, spread over half a second or more: visitors refused
//     together must not all come back at the same instant.
//   - Every key you write to Redis has a time to live, given in the same
//     step; the lock's is more than a rebuild (0.2 s) and at most 10 s.
//   - Invalidate is the write path: the shop calls it after the database
//     has committed a change to the shelf. No visitor may be served the
//     shelf's old list after it.
//   - A visitor's context ends when the visitor leaves, and bounds the
//     visitor's own round trips to Redis (a stale reader's lock attempt
//     too): a client may honour deadlines (go-redis's
//     ContextTimeoutEnabled).
//   - Work that outlives its visitor (a rebuild in the background, a
//     flight others wait for) has a deadline on the clock New is given
//     (clock.WithTimeout), no longer than the lock that guards it (kept
//     alive or not) and at most 10 s. With the database hung, no two
//     queries of a shelf are open at once.
//   - On a bad day the database is slow: a query may take up to 5 s, and
//     its answer up to 10 ms more on its way, and a rebuild, on the stale
//     path or on a cold miss, must still land,
//     with one query for the fleet. Its holder keeps the lock meanwhile:
//     renew it while the query runs (checking its token, in one step, and
//     stopping when the query returns), or give it a time to live longer
//     than that (at most 10 s). A holder with no renewal confirmed by the
//     time its lock would expire (a renewal stalled on the network) gives
//     its query up, so that it never reads beside the next holder; and one
//     whose renewal finds another's token in the lock gives it up at once.
//   - While the database fails, the fleet sends it at most one query a
//     second per shelf, and stale values keep serving. With nothing to
//     serve, it still queries at most once per 0.2 s (case 6's backoff).
//   - A list the database gave is served even when Redis will not store
//     it.
//   - A value's age is Redis's to tell: the instances' clocks may disagree
//     by tens of seconds. Read it from Redis with PTTL (or a key that
//     expires); the checker moves Redis's times to live with the scene,
//     not its TIME, and on a real server it answers a shop's PTTL in the
//     scene's time (a script's PTTL is the server's).
package case09

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	mathrand "math/rand/v2"
	"time"

	"github.com/redis/go-redis/v9"
	"golang.org/x/sync/singleflight"

	"stampede/shop/catalog"
	"stampede/shop/clock"
)

const (
	shelfTTL = 30 * time.Second // how long a shelf lives in Redis

	lockTTL    = 2 * time.Second // outlasts a healthy rebuild (0.2 s) by far
	pollEvery  = 50 * time.Millisecond
	waitBudget = time.Second
	retryAfter = time.Second
)

// Shop is one instance of the shop.
type Shop struct {
	db      *catalog.DB
	rdb     *redis.Client
	clock   clock.Clock
	flights singleflight.Group // one flight per shelf in this instance
}

// New returns an instance of the shop in a fleet that shares the database
// db and the Redis behind rdb. The instance tells the time and waits with
// clk.
func New(db *catalog.DB, rdb *redis.Client, clk clock.Clock) *Shop {
	return &Shop{db: db, rdb: rdb, clock: clk}
}

// TryAgain is the answer for a visitor who waited longer than its budget
// for another instance's rebuild: come back in a moment (an HTTP handler
// would send 503 with a Retry-After header).
type TryAgain struct {
	After time.Duration
}

func (e *TryAgain) Error() string {
	return fmt.Sprintf("the shelf is being rebuilt; try again in %v", e.After)
}

// RetryAfter says when to try again.
func (e *TryAgain) RetryAfter() time.Duration { return e.After }

// Top returns a shelf's books: from Redis, else from the database, with
// one flight per shelf per instance and one rebuild for the fleet.
func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	if books, ok, err := s.shared(ctx, shelf); err != nil || ok {
		return books, err
	}
	flight := s.flights.DoChan(shelf, func() (books any, err error) {
		defer func() {
			if r := recover(); r != nil {
				books, err = nil, fmt.Errorf("shop: %s: the query panicked: %v", shelf, r)
			}
		}()
		// The flight outlives the visitor who started it, since others
		// wait for it, but not its lock: its deadline bounds every wait.
		fctx, cancel := clock.WithTimeout(context.WithoutCancel(ctx), s.clock, lockTTL)
		defer cancel()
		return s.fill(fctx, shelf)
	})
	select {
	case r := <-flight:
		if r.Err != nil {
			return nil, r.Err
		}
		return r.Val.([]string), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// fill is an instance's one flight for a shelf: the instance that wins the
// lock reads the source and fills Redis, the others wait for that fill.
func (s *Shop) fill(ctx context.Context, shelf string) ([]string, error) {
	token := rand.Text()
	won, err := s.rdb.SetNX(ctx, lockKey(shelf), token, lockTTL).Result()
	if err != nil {
		return nil, fmt.Errorf("shop: taking the lock on %s: %w", shelf, err)
	}
	if !won {
		return s.awaitFill(ctx, shelf)
	}
	if books, ok, err := s.shared(ctx, shelf); err != nil || ok {
		s.unlock(ctx, shelf, token)
		return books, err
	}
	books, err := s.db.Top(ctx, shelf)
	if err != nil {
		return nil, err // the lock is kept until it expires: the fleet's backoff
	}
	defer s.unlock(ctx, shelf, token)
	if err := s.share(ctx, shelf, books); err != nil {
		return nil, err
	}
	return books, nil
}

// awaitFill polls Redis for the holder's fill until waitBudget has passed.
func (s *Shop) awaitFill(ctx context.Context, shelf string) ([]string, error) {
	deadline := s.clock.Now().Add(waitBudget)
	for s.clock.Now().Before(deadline) {
		if err := s.clock.Sleep(ctx, pollEvery/2+mathrand.N(pollEvery)); err != nil {
			return nil, err
		}
		if books, ok, err := s.shared(ctx, shelf); err != nil || ok {
			return books, err
		}
	}
	return nil, &TryAgain{After: retryAfter}
}

var release = redis.NewScript(`
if redis.call("GET", KEYS[1]) == ARGV[1] then
	return redis.call("DEL", KEYS[1])
end
return 0`)

func (s *Shop) unlock(ctx context.Context, shelf, token string) {
	_ = release.Run(ctx, s.rdb, []string{lockKey(shelf)}, token).Err()
}

// Invalidate is called by the write path after the database has committed
// a change to the shelf: it deletes the shelf from Redis.
func (s *Shop) Invalidate(ctx context.Context, shelf string) error {
	if err := s.rdb.Del(ctx, shelfKey(shelf)).Err(); err != nil {
		return fmt.Errorf("shop: invalidating %s: %w", shelf, err)
	}
	return nil
}

// shared reads the fleet's copy of a shelf from Redis.
func (s *Shop) shared(ctx context.Context, shelf string) ([]string, bool, error) {
	data, err := s.rdb.Get(ctx, shelfKey(shelf)).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("shop: reading %s from Redis: %w", shelf, err)
	}
	var books []string
	if err := json.Unmarshal(data, &books); err != nil {
		return nil, false, fmt.Errorf("shop: decoding %s from Redis: %w", shelf, err)
	}
	return books, true, nil
}

// share writes a shelf to Redis for the whole fleet.
func (s *Shop) share(ctx context.Context, shelf string, books []string) error {
	data, err := json.Marshal(books)
	if err != nil {
		return fmt.Errorf("shop: encoding %s: %w", shelf, err)
	}
	if err := s.rdb.Set(ctx, shelfKey(shelf), data, shelfTTL).Err(); err != nil {
		return fmt.Errorf("shop: writing %s to Redis: %w", shelf, err)
	}
	return nil
}

func shelfKey(shelf string) string { return "shelf:" + shelf }

func lockKey(shelf string) string { return "lock:shelf:" + shelf }
