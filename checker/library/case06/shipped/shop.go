// Package case06 is case 6 of the stampede lab: a fleet of shops and the
// Redis lock.
//
// Read docs/06-fleet-redis-lock.md first. Then:
//
//	go run ./shop run 6     watch six instances each read the source
//	go run ./shop check 6   grade your fix
//
// Both run on an embedded Redis (miniredis). To use a real Redis or Valkey
// server, add --redis redis://localhost:6379/0 to either, or set REDIS_URL.
//
// The shop runs as a fleet: each instance is a Shop made by New, with its
// own memory and its own single-flight, and all of them share one Redis
// and one database. Each instance coalesces its own visitors, so a burst
// on six instances still makes six queries. Add the regeneration lock in
// Redis, so that the fleet makes one: the instance whose flight wins
// SET lock:<shelf> <token> NX PX <ms> rebuilds, and the others wait for
// its fill.
//
// What the checker relies on:
//   - Keep New's signature and Top's.
//   - Wait only on the clock New is given (clk.Sleep and clk.Now), never
//     with time.Sleep, time.After or a ticker: the checker moves that clock
//     by hand, and moves Redis's clock too. A rebuild takes 0.2 s of it.
//   - A visitor who has waited past its budget (a second or so, at most
//     10 s) gets a *TryAgain error, with a delay drawn for that visitor
//     alone, spread over half a second or more: visitors refused together
//     must not all come back at the same instant.
//   - Every key you write to Redis has a time to live, given in the same
//     step (one command, one script, or MULTI/EXEC); the lock's is more
//     than a rebuild and at most 10 s. The checker tells the lock from
//     other keys (a fencing counter, say) by what your code does with it:
//     there while the holder rebuilds, gone or changed after the release.
//   - A list the database gave is served even when Redis will not store
//     it (a replica not yet promoted, say): log it, and let the next fill
//     store it.
//   - A database whose queries fail is backed off from: while it fails,
//     the fleet sends it at most one query per 0.2 s (a rebuild's time),
//     and once it answers again a visitor gets the list within 11 s.
//   - On a bad day the database is slow: a query may take up to 5 s, and
//     its answer up to 10 ms more on its way, and its list must still fill
//     the shelf, with one query for the fleet.
//     A live holder keeps its lock meanwhile: renew it while the query
//     runs, or give it a time to live longer than that (at most 10 s).
//     A renewal extends only a lock that still holds its token, checked
//     and extended in one step, and stops when the query returns. A
//     renewal may stall on the network: a holder with no renewal
//     confirmed by the time its lock would expire gives its query up,
//     so that it never reads beside the next holder; and one whose
//     renewal finds another's token in the lock gives it up at once.
//   - Two servers started alike draw different lock tokens: the tokens
//     check runs two processes at once and compares what each drew, so a
//     fixed seed or a counter in memory fails; crypto/rand passes.
//
// What the checks do not prove: that the lock is safe under a holder that
// pauses longer than its time to live (no lock with a time to live is;
// see the chapter).
package case06

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"golang.org/x/sync/singleflight"

	"stampede/shop/catalog"
	"stampede/shop/clock"
)

const (
	shelfTTL = 30 * time.Second // how long a shelf lives in Redis
	localTTL = 5 * time.Second  // how long an instance keeps a shelf in memory
)

// Shop is one instance of the shop.
type Shop struct {
	db      *catalog.DB
	rdb     *redis.Client
	clock   clock.Clock
	flights singleflight.Group // one flight per shelf in this instance

	mu    sync.RWMutex
	local map[string]copyOf // shelf -> this instance's copy
}

type copyOf struct {
	books []string
	until time.Time
}

// New returns an instance of the shop in a fleet that shares the database
// db and the Redis behind rdb. The instance waits and tells the time with
// clk.
func New(db *catalog.DB, rdb *redis.Client, clk clock.Clock) *Shop {
	return &Shop{db: db, rdb: rdb, clock: clk, local: make(map[string]copyOf)}
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

// Top returns a shelf's books: from this instance's memory, else from
// Redis, else from the database, with one flight per shelf per instance.
func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	if books, ok := s.remembered(shelf); ok {
		return books, nil
	}
	// The flight must not end because its first visitor gave up: it works
	// for every visitor waiting on it.
	flight := s.flights.DoChan(shelf, func() (books any, err error) {
		// DoChan runs this on a goroutine of its own and re-panics a panic
		// there, where nobody can recover it: the instance would die. So
		// the flight recovers its own panic, as in case 5.
		defer func() {
			if r := recover(); r != nil {
				books, err = nil, fmt.Errorf("shop: %s: the query panicked: %v", shelf, r)
			}
		}()
		return s.fill(context.WithoutCancel(ctx), shelf)
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

// fill is an instance's one flight for a shelf.
func (s *Shop) fill(ctx context.Context, shelf string) ([]string, error) {
	books, ok, err := s.shared(ctx, shelf)
	if err != nil {
		return nil, err
	}
	if !ok {
		books, err = s.db.Top(ctx, shelf)
		if err != nil {
			return nil, err
		}
		if err := s.share(ctx, shelf, books); err != nil {
			// The list is right even if Redis would not keep it.
			slog.WarnContext(ctx, "shop: serving a list Redis would not store", "shelf", shelf, "err", err)
		}
	}
	s.remember(shelf, books)
	return books, nil
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

func (s *Shop) remembered(shelf string) ([]string, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	c, ok := s.local[shelf]
	if !ok || !s.clock.Now().Before(c.until) {
		return nil, false
	}
	return c.books, true
}

func (s *Shop) remember(shelf string, books []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.local[shelf] = copyOf{books: books, until: s.clock.Now().Add(localTTL)}
}
