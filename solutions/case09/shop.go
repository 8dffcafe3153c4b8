// Package case09 is the reference solution of case 9, serve stale while one
// rebuilds. Each shelf in Redis has two expiries, both on Redis's clock: a
// logical one, 30 s after the write, after which the value is stale, and a
// physical one (EX 60), after which it is gone. A reader that
// finds a stale value serves it at once and, if it wins the fleet's lock,
// starts the one rebuild in the background. Only a reader that finds nothing
// waits, as in case 6. The chapter is docs/09-serve-stale.md.
package case09

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	mathrand "math/rand/v2"
	"time"

	"github.com/redis/go-redis/v9"
	"golang.org/x/sync/singleflight"

	"stampede/shop/catalog"
	"stampede/shop/clock"
)

const (
	// freshFor is the logical expiry: how long a shelf is served as it is,
	// from its write, on Redis's clock.
	freshFor = 30 * time.Second
	// keepFor is the physical expiry, Redis's. The 30 s between the two is
	// the grace window: a stale shelf can be served while one instance
	// rebuilds it, and no value older than keepFor is ever served.
	keepFor = 60 * time.Second

	// lockTTL bounds how long a holder that dies mid-rebuild blocks the
	// fleet. A live holder renews it while it reads (keepAlive), so a
	// rebuild slower than lockTTL still lands.
	lockTTL = 2 * time.Second
	// queryTimeout bounds a rebuild: a query with no answer by then is
	// hung (a slow one takes up to 5 s), and its lock had better expire
	// for another reader to try.
	queryTimeout = 6 * time.Second
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

// comeBack is one visitor's "try again", with a delay drawn for it alone
// (0.5 to 1.5 s). The visitors of a flight share its refusal: told one
// delay, they would all come back at the same instant, the stampede again
// a second later.
func comeBack() *TryAgain { return &TryAgain{After: retryAfter/2 + mathrand.N(retryAfter)} }

// stored is a shelf as the fleet keeps it in Redis.
type stored struct {
	Books []string `json:"books"`
	// Fresh is set when the value is younger than freshFor. Redis tells
	// it, not the value: its time to live says how long ago the value was
	// written, on the one clock every instance shares. A time written into
	// the value on the writer's clock and read on another instance's is
	// wrong by their difference: an instance 30 s fast would find every
	// list stale, and a list written by one 30 s slow would never be.
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
		// wait for it, but not its lock: a database that hangs must not
		// hold a query and this goroutine for good. Its deadline bounds
		// every wait for it, on this instance as the budget does on the
		// others.
		fctx, cancel := clock.WithTimeout(context.WithoutCancel(ctx), s.clock, queryTimeout)
		defer cancel()
		return s.fill(fctx, shelf)
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

// refresh starts the fleet's one rebuild of a stale shelf, if this reader
// wins the lock, and returns at once either way: the reader has a value to
// serve. Taking the lock costs the reader one round trip to Redis, never
// the rebuild.
func (s *Shop) refresh(ctx context.Context, shelf string) {
	token, won := s.lock(ctx, shelf)
	if !won {
		return // another reader, here or on another instance, rebuilds
	}
	// The rebuild must outlive this visitor, whose context ends when it
	// leaves: it keeps the context's values and drops its end. It gets a
	// deadline of its own, so that a hung database holds neither a query
	// nor this goroutine for good; and it keeps its lock alive only while
	// it reads (see rebuildLocked), so that when the lock expires and
	// another reader starts a rebuild, this one has given up.
	bg, cancel := clock.WithTimeout(context.WithoutCancel(ctx), s.clock, queryTimeout)
	go func() {
		defer cancel()
		// A failed or panicking rebuild is not fatal: the stale value keeps
		// serving until its physical expiry. Nothing about the failure is
		// written to Redis, and the lock is kept until it expires: that is
		// the fleet's backoff, one query per lockTTL to a failing database,
		// where releasing it would let every stale reader try again. No
		// visitor hears of it, so the log must.
		defer func() {
			if r := recover(); r != nil {
				slog.ErrorContext(bg, "shop: a background rebuild panicked; the stale list serves on", "shelf", shelf, "panic", r)
			}
		}()
		_, kept, err := s.rebuildLocked(bg, shelf, token)
		switch {
		case err != nil:
			slog.WarnContext(bg, "shop: a background rebuild failed; the stale list serves on, and the lock holds the fleet back until it expires",
				"shelf", shelf, "err", err)
		case kept:
			s.unlock(bg, shelf, token)
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
	books, _, err := s.rebuildLocked(ctx, shelf, token)
	if errors.Is(err, errLockLost) {
		return nil, comeBack() // another instance rebuilds now
	}
	if err != nil {
		// Kept until it expires, as on the stale path: the fleet's
		// backoff. Let go now, and each cold reader's next flight would
		// query the failing database again.
		return nil, err
	}
	s.unlock(ctx, shelf, token)
	return books, nil
}

// rebuildLocked reads the source and writes the shelf, under the lock, and
// says whether Redis kept the list. A list Redis would not store is
// still the right list: the cold readers waiting for it get it, and the
// background rebuild keeps its lock, so that the fleet does not read the
// source on every stale read while Redis refuses.
func (s *Shop) rebuildLocked(ctx context.Context, shelf, token string) (books []string, kept bool, err error) {
	// Second look: the holder before us may have written a fresh value and
	// let go of the lock between our read and our SET NX.
	if v, ok, err := s.shared(ctx, shelf); err == nil && ok && v.Fresh {
		return v.Books, true, nil
	}
	// The query runs while the lock is ours, and no longer: keepAlive
	// renews it, and ends work once it cannot tell the lock is still
	// ours, so that this query never runs beside the next holder's.
	work, stop := s.keepAlive(ctx, shelf, token)
	defer stop()
	books, err = s.db.Top(work, shelf)
	if err != nil && ctx.Err() == nil && work.Err() != nil {
		return nil, false, errLockLost
	}
	if err != nil {
		return nil, false, err
	}
	if err := s.share(ctx, shelf, books); err != nil {
		slog.WarnContext(ctx, "shop: serving a list Redis would not store", "shelf", shelf, "err", err)
		return books, false, nil
	}
	return books, true, nil
}

// lock tries the shelf's rebuild lock once, with a token of its own. An
// error from Redis counts as a lost lock: the caller serves what it has.
func (s *Shop) lock(ctx context.Context, shelf string) (string, bool) {
	token := rand.Text()
	won, err := s.rdb.SetNX(ctx, lockKey(shelf), token, lockTTL).Result()
	return token, err == nil && won
}

// errLockLost is a rebuild that stopped because its lock may have passed
// to another instance.
var errLockLost = errors.New("shop: the rebuild lock was lost while the query ran")

// keepAlive renews the shelf's lock every third of lockTTL while the
// holder works. It returns the context to work on, which ends with ctx,
// when a renewal finds the lock taken by another instance, or when no
// renewal has been confirmed for a whole lockTTL (the lock may have
// expired); and stop, which ends the renewals and waits for them.
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

// renew extends the lock only if it still holds our token, in one step.
var renew = redis.NewScript(`
if redis.call("GET", KEYS[1]) == ARGV[1] then
	return redis.call("PEXPIRE", KEYS[1], ARGV[2])
end
return 0`)

// release deletes the lock only if it still holds our token, in one step.
var release = redis.NewScript(`
if redis.call("GET", KEYS[1]) == ARGV[1] then
	return redis.call("DEL", KEYS[1])
end
return 0`)

func (s *Shop) unlock(ctx context.Context, shelf, token string) {
	_ = release.Run(ctx, s.rdb, []string{lockKey(shelf)}, token).Err()
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
	return nil, comeBack()
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

// shared reads the fleet's copy of a shelf from Redis, with its time to
// live in the same round trip, to tell whether it is fresh.
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
	// Written keepFor ago less its time to live. PTTL counts whole
	// milliseconds, so a list turns stale up to 1 ms early, never late. A
	// PTTL that failed, or found the key just gone, makes the value stale:
	// it is still served, and a rebuild is tried.
	v.Fresh = ttl.Err() == nil && ttl.Val() > keepFor-freshFor
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
