// Package versioned is a known-right answer to case 9 written differently
// from the reference: each shelf has a generation in Redis, which the
// write path's delete moves on in the same step. A rebuild takes the lock
// of the generation it began in and writes only if the generation is still
// that one, in one script. A rebuild that read the source before a change
// cannot put its list back after the delete (the race the reference
// admits), and a reader who finds the shelf deleted takes the new
// generation's lock at once: after a delete, a second read may run while
// the old one does, and only the second one's list is kept. A holder renews
// its lock while it reads, only while the lock and the generation are both
// still its own: a delete ends the old generation's read, which could
// store nothing.
//
// Verdict: passes every check.
package versioned

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
	// keepFor is the physical expiry, Redis's. The 30 s between the two is
	// the grace window: a stale shelf can be served while one instance
	// rebuilds it, and no value older than keepFor is ever served.
	keepFor = 60 * time.Second

	// lockTTL bounds how long a holder that dies mid-rebuild blocks the
	// fleet, and outlasts a healthy rebuild (0.2 s) by a wide margin. A
	// live holder renews it while it reads (keepAlive).
	lockTTL = 2 * time.Second
	// rebuildFor bounds detached work: past the slowest query the
	// contract allows (5 s), so that a slow database still fills the
	// shelf; a hung one holds nothing for good.
	rebuildFor = 6 * time.Second
	// genTTL keeps a shelf's generation well past any value or lock
	// written under it.
	genTTL = 10 * time.Minute
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

// errBusy is the flight's "another holder rebuilds": the holder did not
// fill in time, or this one's lock moved on. Its visitors turn it into a
// *TryAgain each.
var errBusy = errors.New("shop: the shelf is being rebuilt elsewhere")

// stored is a shelf as the fleet keeps it in Redis.
type stored struct {
	Books []string `json:"books"`
	// Fresh says the list is younger than freshFor by Redis's clock, which
	// its time to live tells; no instance's own clock decides it.
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
		if errors.Is(r.Err, errBusy) {
			// Each visitor its own delay, 500 to 1499 ms.
			return nil, &TryAgain{After: time.Duration(500+mathrand.IntN(1000)) * time.Millisecond}
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
	l, won := s.lock(ctx, shelf)
	if !won {
		return // another reader, here or on another instance, rebuilds
	}
	// The rebuild outlives this visitor, with a deadline of its own.
	bg, cancel := clock.WithTimeout(context.WithoutCancel(ctx), s.clock, rebuildFor)
	go func() {
		defer cancel()
		// A failed rebuild writes nothing and keeps its lock until it
		// expires, so that the fleet backs off from a failing source.
		defer func() { _ = recover() }()
		if _, err := s.rebuildLocked(bg, shelf, l); err == nil {
			s.unlock(bg, shelf, l)
		}
	}()
}

// fill is an instance's one flight for a missing shelf: it rebuilds if it
// wins the lock, and otherwise waits for the holder's fill.
func (s *Shop) fill(ctx context.Context, shelf string) ([]string, error) {
	l, won := s.lock(ctx, shelf)
	if !won {
		return s.awaitFill(ctx, shelf)
	}
	books, err := s.rebuildLocked(ctx, shelf, l)
	if books == nil {
		return nil, err // keep the lock to its expiry: a backoff
	}
	s.unlock(ctx, shelf, l)
	return books, nil // served, stored or not
}

// rebuildLocked reads the source and writes the shelf, under the lock l of
// its generation: a delete since makes the write a no-op.
func (s *Shop) rebuildLocked(ctx context.Context, shelf string, l held) ([]string, error) {
	// Second look: the holder before us may have written a fresh value and
	// let go of the lock between our read and our SET NX.
	if v, ok, err := s.shared(ctx, shelf); err == nil && ok && v.Fresh {
		return v.Books, nil
	}
	work, stop := s.keepAlive(ctx, shelf, l)
	books, err := s.db.Top(work, shelf)
	stop()
	if err != nil && ctx.Err() == nil && work.Err() != nil {
		return nil, errBusy // the lock or the generation moved on
	}
	if err != nil {
		return nil, err
	}
	if err := s.share(ctx, shelf, l.gen, books); err != nil {
		return books, err // the list is right; only Redis would not keep it
	}
	return books, nil
}

// held is a rebuild lock: the shelf's generation it was taken in, and its
// token.
type held struct {
	gen, token string
}

// lock tries the rebuild lock of the shelf's current generation once, with
// a token of its own. An error from Redis counts as a lost lock: the
// caller serves what it has.
func (s *Shop) lock(ctx context.Context, shelf string) (held, bool) {
	gen, err := s.rdb.Get(ctx, genKey(shelf)).Result()
	switch {
	case errors.Is(err, redis.Nil):
		gen = "0"
	case err != nil:
		return held{}, false
	}
	l := held{gen: gen, token: rand.Text()}
	won, err := s.rdb.SetNX(ctx, lockKey(shelf, gen), l.token, lockTTL).Result()
	return l, err == nil && won
}

// release deletes the lock only if it still holds our token, in one step.
var release = redis.NewScript(`
if redis.call("GET", KEYS[1]) == ARGV[1] then
	return redis.call("DEL", KEYS[1])
end
return 0`)

func (s *Shop) unlock(ctx context.Context, shelf string, l held) {
	_ = release.Run(ctx, s.rdb, []string{lockKey(shelf, l.gen)}, l.token).Err()
}

// renew extends the lock only if it still holds our token and the shelf is
// still in the lock's generation, in one step.
var renew = redis.NewScript(`
if redis.call("GET", KEYS[1]) ~= ARGV[1] or (redis.call("GET", KEYS[2]) or "0") ~= ARGV[2] then
	return 0
end
return redis.call("PEXPIRE", KEYS[1], ARGV[3])`)

// keepAlive renews l every third of lockTTL while the holder reads. It
// returns the context to read on, which ends with ctx, when a renewal
// finds the lock taken or the shelf deleted since (its list would not be
// kept), or when no renewal has been confirmed for a whole lockTTL; and
// stop, which ends the renewals and waits for them.
func (s *Shop) keepAlive(ctx context.Context, shelf string, l held) (context.Context, func()) {
	work, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer cancel()
		ours := s.clock.Now().Add(lockTTL)
		for s.clock.Sleep(work, lockTTL/3) == nil {
			sent := s.clock.Now()
			rctx, stopWaiting := clock.WithTimeout(work, s.clock, ours.Sub(sent))
			kept, err := renew.Run(rctx, s.rdb, []string{lockKey(shelf, l.gen), genKey(shelf)},
				l.token, l.gen, lockTTL.Milliseconds()).Bool()
			stopWaiting()
			switch {
			case err == nil && !kept:
				return // taken over, or deleted
			case err == nil:
				ours = sent.Add(lockTTL)
			case !s.clock.Now().Before(ours):
				return // no renewal landed in time: it may have expired
			}
		}
	}()
	return work, func() { cancel(); <-done }
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
	return nil, errBusy
}

// Invalidate is the write path's half: called after the database has
// committed a change to the shelf, it deletes the shelf from Redis. A
// delete, not a new value: a delete carries no data, so it cannot put back
// an older list than the one committed. And the key goes outright, with
// its grace window: the window is for a value that aged, never for one
// known to be wrong.
//
// It also moves the shelf to a new generation, in the same step: a rebuild
// that read the source before the change, still running, cannot write
// what it read, and a reader who finds the shelf gone may take the new
// generation's lock at once.
func (s *Shop) Invalidate(ctx context.Context, shelf string) error {
	err := invalidate.Run(ctx, s.rdb, []string{shelfKey(shelf), genKey(shelf)}, genTTL.Milliseconds()).Err()
	if err != nil && !errors.Is(err, redis.Nil) {
		return fmt.Errorf("shop: invalidating %s: %w", shelf, err)
	}
	return nil
}

// invalidate deletes the shelf and moves it to its next generation.
var invalidate = redis.NewScript(`
redis.call("DEL", KEYS[1])
redis.call("INCR", KEYS[2])
redis.call("PEXPIRE", KEYS[2], ARGV[1])
return 1`)

// write stores the shelf if its generation is still the one its rebuild
// began in.
var write = redis.NewScript(`
if (redis.call("GET", KEYS[2]) or "0") ~= ARGV[1] then
	return 0
end
redis.call("SET", KEYS[1], ARGV[2], "PX", ARGV[3])
return 1`)

// shared reads the fleet's copy of a shelf from Redis.
func (s *Shop) shared(ctx context.Context, shelf string) (stored, bool, error) {
	var v stored
	var get *redis.StringCmd
	var ttl *redis.DurationCmd
	_, _ = s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
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
	v.Fresh = ttl.Err() == nil && keepFor-ttl.Val() < freshFor
	return v, true, nil
}

// share writes a shelf for the whole fleet, kept by Redis for keepFor
// (fresh for the first freshFor of it), unless a delete has moved
// the shelf past generation gen since its rebuild began.
func (s *Shop) share(ctx context.Context, shelf, gen string, books []string) error {
	data, err := json.Marshal(stored{Books: books})
	if err != nil {
		return fmt.Errorf("shop: encoding %s: %w", shelf, err)
	}
	err = write.Run(ctx, s.rdb, []string{shelfKey(shelf), genKey(shelf)}, gen, data, keepFor.Milliseconds()).Err()
	if err != nil && !errors.Is(err, redis.Nil) {
		return fmt.Errorf("shop: writing %s to Redis: %w", shelf, err)
	}
	return nil
}

func shelfKey(shelf string) string { return "shelf:" + shelf }

func lockKey(shelf, gen string) string { return "lock:shelf:" + shelf + ":" + gen }

func genKey(shelf string) string { return "gen:shelf:" + shelf }
