// Package refresher is a known-right answer to case 9 written differently
// from the reference: readers never start a rebuild. The first time an
// instance serves a shelf it starts a goroutine that keeps it fresh: it
// sleeps on the clock until the list's logical expiry, takes the fleet's
// lock, and rebuilds; a loser, or a failed rebuild, looks again a second
// later. The goroutine ends when the shelf is gone from Redis (deleted, or
// past its physical expiry), and the next cold miss starts another. A
// holder's query runs on a goroutine of its own, and the holder renews its
// lock until the query answers, as the refresher sleeps until the expiry.
//
// Verdict: passes every check.
package refresher

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
	// live holder renews it while its query runs (readHeld).
	lockTTL = 2 * time.Second
	// rebuildFor bounds a rebuild: past the slowest query the contract
	// allows (5 s), so that a slow database still fills the shelf, and
	// finite, so that a hung one does not hold the lock for good.
	rebuildFor = 6 * time.Second
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

	mu       sync.Mutex
	watching map[string]bool // shelves this instance keeps fresh
}

// New returns an instance of the shop in a fleet that shares the database
// db and the Redis behind rdb. The instance tells the time and waits with
// clk.
func New(db *catalog.DB, rdb *redis.Client, clk clock.Clock) *Shop {
	return &Shop{db: db, rdb: rdb, clock: clk, watching: map[string]bool{}}
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
	// FreshFor is how much longer the list is fresh, by Redis's clock: its
	// time to live less the grace window. Zero or less when stale.
	FreshFor time.Duration `json:"-"`
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
		s.watch(shelf)
		return v.Books, nil
	}
	// Nothing to serve: case 6's flight, whose visitors wait for one fill.
	flight := s.flights.DoChan(shelf, func() (books any, err error) {
		defer func() {
			if r := recover(); r != nil {
				books, err = nil, fmt.Errorf("shop: %s: the query panicked: %v", shelf, r)
			}
		}()
		// Bounded, as every piece of detached work is.
		fctx, cancel := clock.WithTimeout(context.WithoutCancel(ctx), s.clock, rebuildFor)
		defer cancel()
		books, err = s.fill(fctx, shelf)
		if err == nil {
			s.watch(shelf)
		}
		return books, err
	})
	select {
	case r := <-flight:
		var busy *TryAgain
		if errors.As(r.Err, &busy) {
			return nil, &TryAgain{After: retryAfter*3/4 + mathrand.N(retryAfter/2)}
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
func (s *Shop) watch(shelf string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.watching[shelf] {
		return
	}
	s.watching[shelf] = true
	go s.keepFresh(shelf)
}

// keepFresh rebuilds a shelf at each logical expiry until it is gone.
func (s *Shop) keepFresh(shelf string) {
	defer func() {
		s.mu.Lock()
		delete(s.watching, shelf)
		s.mu.Unlock()
	}()
	ctx := context.Background()
	for {
		v, ok, err := s.shared(ctx, shelf)
		if !ok && err == nil {
			return // deleted or expired: a reader's cold miss takes over
		}
		if wait := v.FreshFor; err == nil && wait > 0 {
			if s.clock.Sleep(ctx, wait) != nil {
				return
			}
			continue
		}
		if token, won := s.lock(ctx, shelf); won {
			func() {
				rctx, cancel := clock.WithTimeout(ctx, s.clock, rebuildFor)
				defer cancel()
				defer func() { _ = recover() }()
				// A failed rebuild keeps the lock until it expires: no
				// instance tries the failing source again before then.
				if _, err := s.rebuildLocked(rctx, shelf, token); err == nil {
					s.unlock(rctx, shelf, token)
				}
			}()
		}
		// Whoever won, look again in a second: by then the list is fresh,
		// or this instance tries again.
		if s.clock.Sleep(ctx, time.Second) != nil {
			return
		}
	}
}

// fill is an instance's one flight for a missing shelf: it rebuilds if it
// wins the lock, and otherwise waits for the holder's fill.
func (s *Shop) fill(ctx context.Context, shelf string) ([]string, error) {
	token, won := s.lock(ctx, shelf)
	if !won {
		return s.awaitFill(ctx, shelf)
	}
	books, err := s.rebuildLocked(ctx, shelf, token)
	if books != nil {
		s.unlock(ctx, shelf, token)
		return books, nil // served, stored or not
	}
	// Failed: no release. Until the lock expires the fleet waits rather
	// than query again.
	return nil, err
}

// rebuildLocked reads the source and writes the shelf, under the lock. When
// Redis will not keep the list it returns it with the write's error.
func (s *Shop) rebuildLocked(ctx context.Context, shelf, token string) ([]string, error) {
	// Second look: the holder before us may have written a fresh value and
	// let go of the lock between our read and our SET NX.
	if v, ok, err := s.shared(ctx, shelf); err == nil && ok && v.FreshFor > 0 {
		return v.Books, nil
	}
	books, err := s.readHeld(ctx, shelf, token)
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

// readHeld queries the source on a goroutine of its own and, until it
// answers, renews the lock from here every third of lockTTL. The query is
// given up when a renewal finds the lock is not ours, or when the lock may
// have run out by the last renewal Redis confirmed: past then another
// instance may hold it, and query beside this one.
func (s *Shop) readHeld(ctx context.Context, shelf, token string) ([]string, error) {
	qctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type answer struct {
		books []string
		err   error
	}
	answered := make(chan answer, 1)
	go func() {
		var a answer
		defer func() {
			// A panic here would end the process: no recover above
			// reaches this goroutine.
			if r := recover(); r != nil {
				a = answer{err: fmt.Errorf("shop: %s: the query panicked: %v", shelf, r)}
			}
			answered <- a
			cancel() // wakes the renewals
		}()
		a.books, a.err = s.db.Top(qctx, shelf)
	}()
	until := s.clock.Now().Add(lockTTL) // ours at least until then
	for s.clock.Sleep(qctx, lockTTL/3) == nil {
		sent := s.clock.Now()
		rctx, stop := clock.WithTimeout(qctx, s.clock, until.Sub(sent))
		ours, err := renew.Run(rctx, s.rdb, []string{lockKey(shelf)}, token, lockTTL.Milliseconds()).Bool()
		stop()
		if err == nil && !ours {
			break // taken over
		}
		if err == nil {
			until = sent.Add(lockTTL)
		} else if !s.clock.Now().Before(until) {
			break // it may have expired
		}
	}
	cancel()
	a := <-answered
	return a.books, a.err
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
	if ttl.Err() == nil {
		v.FreshFor = ttl.Val() - (keepFor - freshFor)
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
