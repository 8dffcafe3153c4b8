// Package fencing is a known-right answer to case 6 that adds the chapter's
// fencing token: each grant of the lock takes a number from a counter in
// Redis (INCR, in a script that gives the counter a day to live), and the
// shelf is written by a script that refuses a number lower than the last
// one written. A stalled holder's late write is refused. The counter is a
// key that outlives every lock, and is not a lock. A watchdog renews the
// lock while the holder reads, with a script that checks the token, and
// ends the read when the lock is no longer the holder's.
//
// Verdict: passes every check.
package fencing

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	mathrand "math/rand/v2"
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

	// lockTTL bounds how long a holder that dies mid-rebuild blocks the
	// fleet. A live holder's watchdog renews it while it reads, so a query
	// slower than lockTTL (up to 5 s) keeps its lock and fills the shelf.
	lockTTL = 2 * time.Second
	// flightTimeout bounds a flight: past the slowest query, so that a
	// slow one is not given up, and well short of forever, so that a hung
	// one ends and its renewals with it.
	flightTimeout = 8 * time.Second
	// A loser polls Redis for the holder's fill about every pollEvery, and
	// gives up after waitBudget: by then the holder is slow or dead, and
	// the visitor is better served by "try again" than by a longer wait.
	pollEvery  = 50 * time.Millisecond
	waitBudget = time.Second
	retryAfter = time.Second
	fenceTTL   = 24 * time.Hour
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
// The visitors of a flight, and every hit on the instance's copy, share one
// slice: callers must not change it.
func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	if books, ok := s.remembered(shelf); ok {
		return books, nil
	}
	// The flight must not end because its first visitor gave up: it works
	// for every visitor waiting on it.
	flight := s.flights.DoChan(shelf, func() (books any, err error) {
		// DoChan runs this on a goroutine of its own and re-panics a panic
		// there, where nobody can recover it: the instance would die with
		// every visitor it serves. So the flight recovers, as in case 5.
		// (A runtime.Goexit here would leave the waiters to their
		// contexts: DoChan sends nothing then. Case 5 shows the cure.)
		defer func() {
			if r := recover(); r != nil {
				// Production code keeps the stack too (runtime/debug.Stack) or logs it.
				books, err = nil, fmt.Errorf("shop: %s: the query panicked: %v", shelf, r)
			}
		}()
		// Detached from the first visitor, who may leave, but with a
		// deadline of its own: a hung database must not hold the flight,
		// and every visitor who joins it, for good.
		ctx, cancel := clock.WithTimeout(context.WithoutCancel(ctx), s.clock, flightTimeout)
		defer cancel()
		books, err = s.fill(ctx, shelf)
		if err != nil && ctx.Err() != nil {
			return nil, &TryAgain{After: retryAfter} // out of time: come back later
		}
		return books, err
	})
	select {
	case r := <-flight:
		var busy *TryAgain
		if errors.As(r.Err, &busy) {
			// One delay per visitor: the flight's refusal is shared, and a
			// shared delay brings them all back at one instant.
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

// fill is an instance's one flight for a shelf. Across the fleet, the
// flights race for the shelf's lock in Redis: the winner reads the source
// and fills Redis, the losers wait for that fill.
func (s *Shop) fill(ctx context.Context, shelf string) ([]string, error) {
	books, ok, err := s.shared(ctx, shelf)
	if err != nil {
		return nil, err
	}
	if !ok {
		books, err = s.rebuild(ctx, shelf)
		if err != nil {
			return nil, err
		}
	}
	s.remember(shelf, books)
	return books, nil
}

// rebuild takes the shelf's lock and reads the source, or, if another
// instance holds the lock, waits for its fill.
func (s *Shop) rebuild(ctx context.Context, shelf string) ([]string, error) {
	// The token tells this holding of the lock from every other, so that
	// the release can check the lock is still ours.
	token := rand.Text()
	won, err := s.rdb.SetNX(ctx, lockKey(shelf), token, lockTTL).Result()
	if err != nil {
		return nil, fmt.Errorf("shop: taking the lock on %s: %w", shelf, err)
	}
	if !won {
		return s.awaitFill(ctx, shelf)
	}
	fence, err := nextFence.Run(ctx, s.rdb, []string{fenceKey(shelf)}, fenceTTL.Milliseconds()).Int64()
	if err != nil {
		return nil, fmt.Errorf("shop: numbering the lock on %s: %w", shelf, err)
	}

	// Second look: the holder before us may have filled the shelf and let
	// go of the lock between our miss and our SET NX.
	if books, ok, err := s.shared(ctx, shelf); err != nil || ok {
		s.unlock(ctx, shelf, token)
		return books, err
	}
	// The fence refuses a late write, but not a second query: the
	// watchdog keeps the lock ours while we read, and ends the read once
	// it cannot show the lock is ours, before the next holder's begins.
	// (A panic in the query ends the flight's context, and the watchdog
	// with it.)
	work, stop := s.watchdog(ctx, shelf, token)
	books, err := s.db.Top(work, shelf)
	stop()
	if err != nil && errors.Is(context.Cause(work), errLockLost) {
		// Another instance holds the lock, and fills the shelf.
		return nil, &TryAgain{After: retryAfter}
	}
	if err != nil {
		// No release: the lock runs out its time to live, and the fleet
		// leaves the failing database alone until then.
		return nil, err
	}
	if err := s.shareFenced(ctx, shelf, books, fence); err != nil {
		slog.WarnContext(ctx, "shop: the fenced write failed; serving the list", "shelf", shelf, "err", err)
	}
	s.unlock(ctx, shelf, token)
	return books, nil
}

// awaitFill polls Redis for the holder's fill until waitBudget has passed.
// The polls are jittered so that the losers of a burst do not all ask at
// the same instant.
func (s *Shop) awaitFill(ctx context.Context, shelf string) ([]string, error) {
	deadline := s.clock.Now().Add(waitBudget)
	for s.clock.Now().Before(deadline) {
		pause := pollEvery/2 + mathrand.N(pollEvery)
		if err := s.clock.Sleep(ctx, pause); err != nil {
			return nil, err
		}
		if books, ok, err := s.shared(ctx, shelf); err != nil || ok {
			return books, err
		}
	}
	return nil, &TryAgain{After: retryAfter}
}

// errLockLost ends a read whose lock the holder can no longer show is its
// own.
var errLockLost = errors.New("shop: the lock is no longer ours")

// watchdog renews the lock every third of lockTTL while the holder reads.
// It ends work with errLockLost when a renewal finds the lock gone or
// another's, or when none has landed for a whole lockTTL (Redis is slow
// or away, and the lock may have expired). stop ends the renewals and
// waits for the last: none is sent once the read is over.
func (s *Shop) watchdog(ctx context.Context, shelf, token string) (work context.Context, stop func()) {
	work, end := context.WithCancelCause(ctx)
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		expires := s.clock.Now().Add(lockTTL) // ours at least until then
		for s.clock.Sleep(work, lockTTL/3) == nil {
			sent := s.clock.Now()
			// A renewal that has not landed by the time the lock
			// expires is no use: wait for it that long.
			try, giveUp := clock.WithTimeout(work, s.clock, expires.Sub(sent))
			n, err := extend.Run(try, s.rdb, []string{lockKey(shelf)}, token, lockTTL.Milliseconds()).Int()
			giveUp()
			switch {
			case err == nil && n == 0:
				end(errLockLost)
			case err == nil:
				expires = sent.Add(lockTTL)
			case !s.clock.Now().Before(expires):
				end(errLockLost)
			}
		}
	}()
	return work, func() { end(context.Canceled); <-stopped }
}

// extend renews the lock only if it still holds our token, in one step:
// a plain PEXPIRE could keep another holder's lock alive.
var extend = redis.NewScript(`
if redis.call("GET", KEYS[1]) == ARGV[1] then
	return redis.call("PEXPIRE", KEYS[1], ARGV[2])
end
return 0`)

// release deletes the lock only if it still holds our token. The check
// and the delete must be one step: between a GET and a DEL the lock can
// expire and be taken by another instance, whose lock the DEL would drop.
var release = redis.NewScript(`
if redis.call("GET", KEYS[1]) == ARGV[1] then
	return redis.call("DEL", KEYS[1])
end
return 0`)

// unlock releases the lock. A failure is not worth an error for the
// visitors, who have their books: the lock expires within lockTTL anyway.
func (s *Shop) unlock(ctx context.Context, shelf, token string) {
	_ = release.Run(ctx, s.rdb, []string{lockKey(shelf)}, token).Err()
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

// nextFence hands out the next fencing number; the counter lives a day
// past its last use, far longer than any lock.
var nextFence = redis.NewScript(`
local n = redis.call("INCR", KEYS[1])
redis.call("PEXPIRE", KEYS[1], ARGV[1])
return n`)

// fencedSet writes the shelf only if no later holder has written it.
var fencedSet = redis.NewScript(`
local last = tonumber(redis.call("GET", KEYS[2]) or "0")
if tonumber(ARGV[2]) < last then
	return 0
end
redis.call("SET", KEYS[2], ARGV[2], "PX", ARGV[4])
redis.call("SET", KEYS[1], ARGV[1], "PX", ARGV[3])
return 1`)

// shareFenced writes a shelf with the holder's fencing number.
func (s *Shop) shareFenced(ctx context.Context, shelf string, books []string, fence int64) error {
	data, err := json.Marshal(books)
	if err != nil {
		return fmt.Errorf("shop: encoding %s: %w", shelf, err)
	}
	keys := []string{shelfKey(shelf), "fence:written:" + shelf}
	if err := fencedSet.Run(ctx, s.rdb, keys, data, fence, shelfTTL.Milliseconds(), fenceTTL.Milliseconds()).Err(); err != nil {
		return fmt.Errorf("shop: writing %s to Redis: %w", shelf, err)
	}
	return nil
}

func fenceKey(shelf string) string { return "fence:" + shelf }

func shelfKey(shelf string) string { return "shelf:" + shelf }

func lockKey(shelf string) string { return "lock:shelf:" + shelf }

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
