// Package early is a known-right answer to case 9 written differently
// from the reference: Stagedoor's early refresh. A reader that finds the
// list within 5 s of its logical expiry, or past it, serves it and starts
// the fleet's one rebuild, so that under steady traffic the list is
// rebuilt before it goes stale at all. Its lock is not renewed: it lives
// longer than a rebuild may run, and a rebuild may run longer than the
// slowest query.
//
// Verdict: passes every check.
package early

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
	// freshFor is the logical expiry: how long a shelf is served as it is.
	freshFor = 30 * time.Second
	// refreshAhead is how long before the logical expiry a reader starts
	// the rebuild.
	refreshAhead = 5 * time.Second
	// keepFor is the physical expiry, Redis's. The 30 s between the two is
	// the grace window: a stale shelf can be served while one instance
	// rebuilds it, and no value older than keepFor is ever served.
	keepFor = 60 * time.Second

	// rebuildFor bounds a rebuild, detached as it is: past the slowest
	// query the contract allows (5 s), so that a slow database still fills
	// the shelf, and short of the lock, so that no rebuild reads beside the
	// next holder's.
	rebuildFor = 6 * time.Second
	// lockTTL bounds how long a holder that dies mid-rebuild blocks the
	// fleet. It outlives rebuildFor, with time for the write and the
	// release, so it needs no renewal.
	lockTTL = 8 * time.Second
	// backoff is how long a failed rebuild keeps the lock: the fleet's
	// pause before it asks a failing database again. A rebuild that ran
	// out its time has that much of its lock left anyway.
	backoff = lockTTL - rebuildFor
	// A reader that finds nothing polls for the holder's fill about every
	// pollEvery, and past waitBudget answers "try again".
	pollEvery  = 50 * time.Millisecond
	waitBudget = time.Second
	retryAfter = time.Second
)

// Shop is one instance of the shop.
type Shop struct {
	db      *catalog.DB
	rdb     *redis.Client
	clock   clock.Clock
	flights singleflight.Group // cold misses: one flight per shelf in this instance
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
	// Age is how long ago the list was written, as Redis's clock tells it
	// (keepFor less its time to live): the one clock the instances share.
	Age time.Duration `json:"-"`
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
		if v.Age >= freshFor-refreshAhead {
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
		// wait for it, but not its lock: its deadline bounds every wait.
		fctx, cancel := clock.WithTimeout(context.WithoutCancel(ctx), s.clock, rebuildFor)
		defer cancel()
		return s.fill(fctx, shelf)
	})
	select {
	case r := <-flight:
		var busy *TryAgain
		if errors.As(r.Err, &busy) {
			// The flight's refusal is shared; the delay must not be.
			return nil, &TryAgain{After: retryAfter/2 + mathrand.N(retryAfter)}
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
	token, won := s.lock(ctx, shelf)
	if !won {
		return // another reader, here or on another instance, rebuilds
	}
	// Detached from the visitor, bounded inside the lock.
	bg, cancel := clock.WithTimeout(context.WithoutCancel(ctx), s.clock, rebuildFor)
	go func() {
		defer cancel()
		// A failed rebuild keeps the lock for the backoff: the fleet's
		// pause. The list it has keeps serving meanwhile.
		defer func() { _ = recover() }()
		if _, err := s.rebuildLocked(bg, shelf); err == nil {
			s.unlock(bg, shelf, token)
		} else {
			s.backOff(bg, shelf, token)
		}
	}()
}

// fill is an instance's one flight for a missing shelf: it rebuilds if it
// wins the lock, and otherwise waits for the holder's fill.
func (s *Shop) fill(ctx context.Context, shelf string) ([]string, error) {
	token, won := s.lock(ctx, shelf)
	if !won {
		return s.awaitFill(ctx, shelf)
	}
	books, err := s.rebuildLocked(ctx, shelf)
	if books == nil {
		s.backOff(ctx, shelf, token)
		return nil, err // the lock holds the fleet back meanwhile
	}
	s.unlock(ctx, shelf, token)
	return books, nil // served, stored or not
}

// rebuildLocked reads the source and writes the shelf, under the lock. When
// Redis will not keep the list it returns it with the write's error.
func (s *Shop) rebuildLocked(ctx context.Context, shelf string) ([]string, error) {
	// Second look: the holder before us may have written a fresh value and
	// let go of the lock between our read and our SET NX.
	if v, ok, err := s.shared(ctx, shelf); err == nil && ok && v.Age < freshFor-refreshAhead {
		return v.Books, nil
	}
	books, err := s.db.Top(ctx, shelf)
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

// shorten cuts the lock's time to live to ARGV[2] ms, only if it still
// holds our token and has longer to live, in one step.
var shorten = redis.NewScript(`
if redis.call("GET", KEYS[1]) == ARGV[1] and redis.call("PTTL", KEYS[1]) > tonumber(ARGV[2]) then
	return redis.call("PEXPIRE", KEYS[1], ARGV[2])
end
return 0`)

// backOff leaves a failed rebuild's lock to expire after backoff, not
// lockTTL: a lock sized for the slowest query would keep the shelf from a
// database that is back for seconds.
func (s *Shop) backOff(ctx context.Context, shelf, token string) {
	_ = shorten.Run(ctx, s.rdb, []string{lockKey(shelf)}, token, backoff.Milliseconds()).Err()
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
	var ttl *redis.DurationCmd
	_, _ = s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		get = p.Get(ctx, shelfKey(shelf))
		ttl = p.PTTL(ctx, shelfKey(shelf))
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
	v.Age = keepFor
	if left := ttl.Val(); ttl.Err() == nil && left > 0 {
		v.Age = keepFor - left
	}
	return v, true, nil
}

// share writes a shelf for the whole fleet, kept by Redis for keepFor.
func (s *Shop) share(ctx context.Context, shelf string, books []string) error {
	data, err := json.Marshal(stored{Books: books})
	if err != nil {
		return fmt.Errorf("shop: encoding %s: %w", shelf, err)
	}
	if err := s.rdb.Set(ctx, shelfKey(shelf), data, keepFor).Err(); err != nil {
		return fmt.Errorf("shop: writing %s to Redis: %w", shelf, err)
	}
	return nil
}

func shelfKey(shelf string) string { return "shelf:" + shelf }

func lockKey(shelf string) string { return "lock:shelf:" + shelf }
