// Package case06 is the reference solution of case 6, a fleet of shops and
// the Redis lock: the in-process single-flight of cases 1 to 5, then a
// regeneration lock in Redis shared by the fleet. The chapter is
// docs/06-fleet-redis-lock.md.
package case06

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
	// fleet. A live holder renews it every third of it while it reads
	// (keepAlive), so a query slower than lockTTL keeps its lock and
	// fills the shelf: without that, on the day the database is slow, the
	// lock would pass from holder to holder and nothing would ever fill.
	lockTTL = 2 * time.Second
	// queryTimeout bounds a flight: a query with no answer by then is
	// hung (a slow one takes up to 5 s), and the fleet is better served by
	// its lock expiring and another instance trying than by a renewal
	// that never ends.
	queryTimeout = 6 * time.Second
	// A loser polls Redis for the holder's fill about every pollEvery, and
	// gives up after waitBudget: by then the holder is slow or dead, and
	// the visitor is better served by "try again" than by a longer wait.
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

// comeBack is one visitor's "try again", with a delay drawn for it alone
// (0.5 to 1.5 s). The visitors of a flight share its refusal: told one
// delay, they would all come back at the same instant, the stampede again
// a second later.
func comeBack() *TryAgain { return &TryAgain{After: retryAfter/2 + mathrand.N(retryAfter)} }

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
		// WithoutCancel drops the visitor's deadline too, so the flight
		// takes one of its own, on the shop's clock: with the database
		// hung, a flight with none would never land, and every visitor
		// who joined it would wait until it left.
		ctx, cancel := clock.WithTimeout(context.WithoutCancel(ctx), s.clock, queryTimeout)
		defer cancel()
		books, err = s.fill(ctx, shelf)
		if err != nil && ctx.Err() != nil {
			// Out of time: the database, or the holder this flight waits
			// for, is slow or hung. The visitors are told when to come
			// back, as a loser past its budget is.
			return nil, comeBack()
		}
		return books, err
	})
	select {
	case r := <-flight:
		var busy *TryAgain
		if errors.As(r.Err, &busy) {
			return nil, comeBack()
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
	// Second look, in this instance's memory: a flight that landed
	// between the visitor's look and this one has remembered the shelf.
	if books, ok := s.remembered(shelf); ok {
		return books, nil
	}
	books, ok, err := s.shared(ctx, shelf)
	if err != nil {
		// Redis cannot be read, and no lock can be taken there either.
		// This flight is still the instance's only one for the shelf, so
		// reading the source from here costs the database one query per
		// instance: a Redis outage need not be the shop's.
		slog.WarnContext(ctx, "shop: Redis unreadable; reading the source", "shelf", shelf, "err", err)
		books, err = s.db.Top(ctx, shelf)
		if err != nil {
			return nil, err
		}
		s.remember(shelf, books)
		return books, nil
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
	// Released on the way out, unless the query failed: see below.
	backOff := false
	defer func() {
		if !backOff {
			s.unlock(ctx, shelf, token)
		}
	}()

	// Second look: the holder before us may have filled the shelf and let
	// go of the lock between our miss and our SET NX.
	if books, ok, err := s.shared(ctx, shelf); err != nil || ok {
		return books, err
	}
	// The query runs while the lock is ours, and no longer: keepAlive
	// renews the lock, and ends work once it cannot tell the lock is
	// still ours, so that no query of this holder runs beside the next
	// holder's. (Deferred after the release, it stops before it.)
	work, stop := s.keepAlive(ctx, shelf, token)
	defer stop()
	books, err := s.db.Top(work, shelf)
	if err != nil && ctx.Err() == nil && work.Err() != nil {
		// The lock passed to another instance while we read: its holder
		// fills the shelf; ours has nothing to release.
		return nil, comeBack()
	}
	if err != nil {
		// A failed query keeps the lock until it expires: that is the
		// fleet's backoff, one query per lockTTL to a database in trouble.
		// Let go now, and the next visitor on any instance would start a
		// flight that queries again at once: one query per visitor to a
		// database that cannot answer them.
		backOff = true
		return nil, err
	}
	if err := s.share(ctx, shelf, books); err != nil {
		// The list is right even if Redis would not keep it (a replica
		// not yet promoted, say): serve it, and let the next fill store
		// it. Turning this into the readers' error would throw a good
		// list away at the moment Redis is in trouble.
		slog.WarnContext(ctx, "shop: serving a list Redis would not store", "shelf", shelf, "err", err)
	}
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
	return nil, comeBack()
}

// keepAlive renews the shelf's lock every third of lockTTL while the
// holder works. It returns the context to work on, which ends with ctx,
// when a renewal finds the lock taken by another instance, or when no
// renewal has been confirmed for a whole lockTTL (Redis is slow or
// unreachable: the lock may have expired); and stop, which ends the
// renewals and waits for them.
func (s *Shop) keepAlive(ctx context.Context, shelf, token string) (work context.Context, stop func()) {
	work, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer cancel()
		held := s.clock.Now().Add(lockTTL) // ours at least until then
		// Wake for the next renewal, or when the lock may have lapsed:
		// renewals that fail at once must not carry the work past it.
		for s.clock.Sleep(work, min(lockTTL/3, held.Sub(s.clock.Now()))) == nil {
			sent := s.clock.Now()
			if !sent.Before(held) {
				return // no renewal landed in time: it may have expired
			}
			rctx, stopWaiting := clock.WithTimeout(work, s.clock, held.Sub(sent))
			ours, err := renew.Run(rctx, s.rdb, []string{lockKey(shelf)}, token, lockTTL.Milliseconds()).Bool()
			stopWaiting()
			switch {
			case err == nil && !ours:
				return // taken over
			case err == nil:
				held = sent.Add(lockTTL)
			case !s.clock.Now().Before(held):
				return // no renewal landed in time: it may have expired
			}
		}
	}()
	return work, func() { cancel(); <-done }
}

// renew extends the lock only if it still holds our token, in one step,
// as release deletes it: a plain PEXPIRE could keep another holder's
// lock alive.
var renew = redis.NewScript(`
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

// unlock releases the lock. It runs on a context of its own, since the
// flight's may be why the flight is over (its deadline passed), and gives
// up once the lock would have expired anyway. A failure is not worth an
// error for the visitors: the lock expires within lockTTL.
func (s *Shop) unlock(ctx context.Context, shelf, token string) {
	ctx, cancel := clock.WithTimeout(context.WithoutCancel(ctx), s.clock, lockTTL)
	defer cancel()
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
