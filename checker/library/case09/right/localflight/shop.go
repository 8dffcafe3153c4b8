// Package localflight is a known-right answer to case 9 written differently
// from the reference: an in-process single-flight in front of the Redis
// lock, so that an instance sends one lock attempt per expiry however many
// of its readers find the list stale. The flight runs on a goroutine of
// its own (DoChan) and nobody reads its result: readers never wait. The
// logical expiry is a key of its own, fresh:shelf:<name>, that Redis
// expires after 30 s. A holder keeps its lock while it reads with a guard
// that renews it, and gives the read up the moment a renewal fails.
//
// Verdict: passes every check.
package localflight

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	mathrand "math/rand/v2"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"golang.org/x/sync/singleflight"

	"stampede/shop/catalog"
	"stampede/shop/clock"
)

const (
	// freshFor is the logical expiry: how long a shelf is served as it is.
	freshFor = 30 * time.Second
	// keepFor is the physical expiry, Redis's. The 30 s between the two is
	// the grace window: a stale shelf can be served while one instance
	// rebuilds it, and no value older than keepFor is ever served.
	keepFor = 60 * time.Second

	// lockTTL bounds how long a holder that dies mid-rebuild blocks the
	// fleet, and outlasts a healthy rebuild (0.2 s) by a wide margin. A
	// live holder renews it while it reads (guard).
	lockTTL = 2 * time.Second
	// rebuildFor bounds detached work: past the slowest query the
	// contract allows (5 s), so that a slow database still fills the
	// shelf; a hung one holds nothing for good.
	rebuildFor = 6 * time.Second
	// A reader that finds nothing polls for the holder's fill about every
	// pollEvery, and past waitBudget answers "try again".
	pollEvery  = 50 * time.Millisecond
	waitBudget = time.Second
	retryAfter = time.Second
)

// Shop is one instance of the shop.
type Shop struct {
	db        *catalog.DB
	rdb       *redis.Client
	clock     clock.Clock
	flights   singleflight.Group // cold misses: one flight per shelf in this instance
	refreshes singleflight.Group // stale hits: one refresh per shelf in this instance
}

// New returns an instance of the shop in a fleet that shares the database
// db and the Redis behind rdb. The instance tells the time and waits with
// clk.
func New(db *catalog.DB, rdb *redis.Client, clk clock.Clock) *Shop {
	return &Shop{db: db, rdb: rdb, clock: clk}
}

// TryAgain is the answer for a visitor who found nothing to serve and
// waited longer than its budget for another instance's rebuild.
type TryAgain struct {
	After time.Duration
}

func (e *TryAgain) Error() string {
	return fmt.Sprintf("the shelf is being rebuilt; try again in %v", e.After)
}

// RetryAfter says when to try again.
func (e *TryAgain) RetryAfter() time.Duration { return e.After }

// stored is a shelf as the fleet keeps it in Redis.
type stored struct {
	Books []string `json:"books"`
	// Fresh is set while the shelf's fresh key is in Redis: that key
	// lives freshFor, the list keepFor, both on Redis's clock, which every
	// instance shares (their own clocks may disagree).
	Fresh bool `json:"-"`
}

// Top returns a shelf's books. A stale shelf is served as it is while one
// rebuild for the fleet runs behind it; only a missing shelf makes the
// visitor wait. Visitors share the slice they get: callers must not change
// it.
func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	v, ok, err := s.shared(ctx, shelf)
	if err != nil {
		return nil, err
	}
	if ok {
		if !v.Fresh {
			s.refresh(ctx, shelf)
		}
		return v.Books, nil
	}
	// Nothing to serve: case 6's flight, whose visitors wait for one fill.
	flight := s.flights.DoChan(shelf, func() (books any, err error) {
		defer func() {
			if r := recover(); r != nil {
				books, err = nil, fmt.Errorf("shop: %s: the query panicked: %v", shelf, r)
			}
		}()
		// The flight outlives the visitor who started it, since others
		// wait for it: its deadline bounds every wait.
		fctx, cancel := clock.WithTimeout(context.WithoutCancel(ctx), s.clock, rebuildFor)
		defer cancel()
		return s.fill(fctx, shelf)
	})
	select {
	case r := <-flight:
		if busy, ok := r.Err.(*TryAgain); ok {
			return nil, &TryAgain{After: busy.After/2 + mathrand.N(busy.After)} // a moment of its own
		}
		if r.Err != nil {
			return nil, r.Err
		}
		return r.Val.([]string), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// refresh starts the fleet's one rebuild of a stale shelf, if this reader
// wins the lock, and returns at once either way: the reader has a value to
// serve. Taking the lock costs the reader one round trip to Redis, never
// the rebuild.
func (s *Shop) refresh(ctx context.Context, shelf string) {
	s.refreshes.DoChan(shelf, func() (any, error) {
		defer func() { _ = recover() }()
		bg, cancel := clock.WithTimeout(context.WithoutCancel(ctx), s.clock, rebuildFor)
		defer cancel()
		token, won := s.lock(bg, shelf)
		if !won {
			return nil, nil
		}
		if _, err := s.rebuildLocked(bg, shelf, token); err != nil {
			return nil, err // the lock stays to its expiry: no retry before then
		}
		s.unlock(bg, shelf, token)
		return nil, nil
	})
}

// fill is an instance's one flight for a missing shelf: it rebuilds if it
// wins the lock, and otherwise waits for the holder's fill.
func (s *Shop) fill(ctx context.Context, shelf string) ([]string, error) {
	token, won := s.lock(ctx, shelf)
	if !won {
		return s.awaitFill(ctx, shelf)
	}
	var books []string
	defer func() {
		// A rebuild with nothing to show keeps the lock until it expires,
		// so that the fleet does not ask a failing source again at once.
		if books != nil {
			s.unlock(ctx, shelf, token)
		}
	}()
	books, err := s.rebuildLocked(ctx, shelf, token)
	if books != nil {
		return books, nil // served, stored or not
	}
	return nil, err
}

// rebuildLocked reads the source and writes the shelf, under the lock. When
// Redis will not keep the list it returns it with the write's error.
func (s *Shop) rebuildLocked(ctx context.Context, shelf, token string) ([]string, error) {
	// Second look: the holder before us may have written a fresh value and
	// let go of the lock between our read and our SET NX.
	if v, ok, err := s.shared(ctx, shelf); err == nil && ok && v.Fresh {
		return v.Books, nil
	}
	books, err := s.guard(ctx, shelf, token, func(ctx context.Context) ([]string, error) {
		return s.db.Top(ctx, shelf)
	})
	if err != nil {
		return nil, err
	}
	if err := s.share(ctx, shelf, books); err != nil {
		return books, err // the list is right; only Redis would not keep it
	}
	return books, nil
}

// lock tries the shelf's rebuild lock once, with a token of its own. An
// error from Redis counts as a lost lock: the caller serves what it has.
func (s *Shop) lock(ctx context.Context, shelf string) (string, bool) {
	token := rand.Text()
	won, err := s.rdb.SetNX(ctx, lockKey(shelf), token, lockTTL).Result()
	return token, err == nil && won
}

// release deletes the lock only if it still holds our token, in one step.
var release = redis.NewScript(`
if redis.call("GET", KEYS[1]) == ARGV[1] then
	return redis.call("DEL", KEYS[1])
end
return 0`)

func (s *Shop) unlock(ctx context.Context, shelf, token string) {
	_ = release.Run(ctx, s.rdb, []string{lockKey(shelf)}, token).Err()
}

// renew extends the lock only if it still holds our token, in one step.
var renew = redis.NewScript(`
if redis.call("GET", KEYS[1]) == ARGV[1] then
	return redis.call("PEXPIRE", KEYS[1], ARGV[2])
end
return 0`)

// guard runs read while it keeps the shelf's lock ours: every third of
// lockTTL it renews the lock, and each renewal must come back "still
// yours" before the next is due. The first that does not (another token,
// an error, no answer in time) ends read's context: the lock then has a
// third of its time left at least, and read must be over before another
// instance can take it. The renewals stop when read returns.
func (s *Shop) guard(ctx context.Context, shelf, token string, read func(context.Context) ([]string, error)) ([]string, error) {
	rctx, cancel := context.WithCancel(ctx)
	var renewals sync.WaitGroup
	renewals.Add(1)
	go func() {
		defer renewals.Done()
		defer cancel()
		held := s.clock.Now().Add(lockTTL) // ours at least until then
		for s.clock.Sleep(rctx, lockTTL/3) == nil {
			sent := s.clock.Now()
			actx, stop := clock.WithTimeout(rctx, s.clock, lockTTL/3)
			ours, err := renew.Run(actx, s.rdb, []string{lockKey(shelf)}, token, lockTTL.Milliseconds()).Bool()
			stop()
			switch {
			case err == nil && !ours:
				return // another holder now
			case err == nil:
				held = sent.Add(lockTTL)
			case !s.clock.Now().Add(lockTTL / 3).Before(held):
				// A renewal failed, and the next may come too late: give
				// the read up. One failure alone is not a lost lock.
				return
			}
		}
	}()
	defer renewals.Wait()
	defer cancel()
	books, err := read(rctx)
	if err != nil && rctx.Err() != nil && ctx.Err() == nil {
		// Given up for the lock: another instance may be rebuilding now.
		return nil, &TryAgain{After: retryAfter}
	}
	return books, err
}

// awaitFill polls Redis, with jitter, for the holder's fill until
// waitBudget has passed.
func (s *Shop) awaitFill(ctx context.Context, shelf string) ([]string, error) {
	deadline := s.clock.Now().Add(waitBudget)
	for s.clock.Now().Before(deadline) {
		if err := s.clock.Sleep(ctx, pollEvery/2+mathrand.N(pollEvery)); err != nil {
			return nil, err
		}
		if v, ok, err := s.shared(ctx, shelf); err != nil || ok {
			return v.Books, err
		}
	}
	return nil, &TryAgain{After: retryAfter}
}

// Invalidate is the write path's half: called after the database has
// committed a change to the shelf, it deletes the shelf from Redis. A
// delete, not a new value: a delete carries no data, so it cannot put back
// an older list than the one committed. And the key goes outright, with
// its grace window: the window is for a value that aged, never for one
// known to be wrong.
func (s *Shop) Invalidate(ctx context.Context, shelf string) error {
	if err := s.rdb.Del(ctx, shelfKey(shelf)).Err(); err != nil {
		return fmt.Errorf("shop: invalidating %s: %w", shelf, err)
	}
	return nil
}

// shared reads the fleet's copy of a shelf from Redis.
func (s *Shop) shared(ctx context.Context, shelf string) (stored, bool, error) {
	var v stored
	var get *redis.StringCmd
	var fresh *redis.IntCmd
	_, _ = s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		get = p.Get(ctx, shelfKey(shelf))
		fresh = p.Exists(ctx, freshKey(shelf))
		return nil
	})
	data, err := get.Bytes()
	if errors.Is(err, redis.Nil) {
		return v, false, nil
	}
	if err != nil {
		return v, false, fmt.Errorf("shop: reading %s from Redis: %w", shelf, err)
	}
	if err := json.Unmarshal(data, &v); err != nil {
		return v, false, fmt.Errorf("shop: decoding %s from Redis: %w", shelf, err)
	}
	v.Fresh = fresh.Val() == 1
	return v, true, nil
}

// share writes a shelf for the whole fleet, kept by Redis for keepFor,
// and its fresh key, for freshFor. The list goes first: a fresh key with
// no list beside it marks nothing.
func (s *Shop) share(ctx context.Context, shelf string, books []string) error {
	data, err := json.Marshal(stored{Books: books})
	if err != nil {
		return fmt.Errorf("shop: encoding %s: %w", shelf, err)
	}
	cmds, _ := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.Set(ctx, shelfKey(shelf), data, keepFor)
		p.Set(ctx, freshKey(shelf), 1, freshFor)
		return nil
	})
	for _, c := range cmds {
		if err := c.Err(); err != nil {
			return fmt.Errorf("shop: writing %s to Redis: %w", shelf, err)
		}
	}
	return nil
}

func shelfKey(shelf string) string { return "shelf:" + shelf }

func freshKey(shelf string) string { return "fresh:shelf:" + shelf }

func lockKey(shelf string) string { return "lock:shelf:" + shelf }
