// Package watchmulti is a known-right answer to case 6 that releases the lock
// with optimistic locking instead of a script: WATCH the lock, GET it, and
// DEL it in MULTI/EXEC only if it still holds this holder's token. If the
// lock changes hands between the GET and the EXEC, the EXEC does nothing.
// The holder renews its lock the same way (PEXPIRE in the MULTI) while it
// reads; the query and the renewals run as an errgroup, each ending the
// other.
//
// Verdict: passes every check.
package watchmulti

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
	"golang.org/x/sync/errgroup"
	"golang.org/x/sync/singleflight"

	"stampede/shop/catalog"
	"stampede/shop/clock"
)

const (
	shelfTTL = 30 * time.Second // how long a shelf lives in Redis
	localTTL = 5 * time.Second  // how long an instance keeps a shelf in memory

	// lockTTL bounds how long a holder that dies mid-rebuild blocks the
	// fleet. A live holder renews it while it reads (renewWhile), so a
	// query slower than lockTTL, up to 5 s, keeps its lock.
	lockTTL = 2 * time.Second
	// flightTimeout bounds a flight: longer than the slowest query, and
	// short enough that a hung one ends, and its renewals with it.
	flightTimeout = 8 * time.Second
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
			// 1 s give or take a quarter, drawn per visitor.
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
	keep := false // a failed query keeps the lock until it expires: the backoff
	defer func() {
		if !keep {
			s.unlock(ctx, shelf, token)
		}
	}()

	// Second look: the holder before us may have filled the shelf and let
	// go of the lock between our miss and our SET NX.
	if books, ok, err := s.shared(ctx, shelf); err != nil || ok {
		return books, err
	}
	// The query and the renewals of its lock run as a group. The
	// renewals stop when the query returns (reading ends); the query
	// stops when a renewal cannot show the lock is ours (the group's
	// context ends), before the next holder's query begins.
	reading, doneReading := context.WithCancel(ctx)
	defer doneReading()
	g, work := errgroup.WithContext(reading)
	g.Go(func() error { return s.renewWhile(work, shelf, token) })
	books, err := s.db.Top(work, shelf)
	doneReading()
	if lost := g.Wait(); lost != nil && err != nil {
		// The lock is another instance's now, and so is the fill: there
		// is nothing of ours to release.
		keep = true
		return nil, &TryAgain{After: retryAfter}
	}
	if err != nil {
		keep = true
		return nil, err
	}
	if s.share(ctx, shelf, books) != nil {
		slog.WarnContext(ctx, "shop: Redis would not keep the list; serving it", "shelf", shelf)
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
	return nil, &TryAgain{After: retryAfter}
}

// errLockLost ends a read whose lock its holder can no longer show is
// its own.
var errLockLost = errors.New("shop: the lock is no longer ours")

// renewWhile renews the lock every third of lockTTL until ctx ends. It
// returns errLockLost when a renewal finds the lock gone or another's, or
// when none has landed for a whole lockTTL (Redis is slow or away, and
// the lock may have expired under us).
func (s *Shop) renewWhile(ctx context.Context, shelf, token string) error {
	ours := s.clock.Now().Add(lockTTL) // the lock is ours at least until then
	for s.clock.Sleep(ctx, lockTTL/3) == nil {
		asked := s.clock.Now()
		try, giveUp := clock.WithTimeout(ctx, s.clock, ours.Sub(asked))
		kept, err := s.extend(try, shelf, token)
		giveUp()
		switch {
		case err == nil && kept:
			ours = asked.Add(lockTTL)
		case ctx.Err() != nil:
			return nil // the read is over
		case err == nil || !s.clock.Now().Before(ours):
			return errLockLost
		}
	}
	return nil
}

// extend gives the lock its whole time to live again if it still holds
// our token, as unlock deletes it: WATCH, GET, and PEXPIRE in MULTI/EXEC.
// A plain PEXPIRE could keep another holder's lock alive; if the lock
// changes hands after the GET, the EXEC does nothing.
func (s *Shop) extend(ctx context.Context, shelf, token string) (bool, error) {
	key := lockKey(shelf)
	var renewed *redis.BoolCmd
	err := s.rdb.Watch(ctx, func(tx *redis.Tx) error {
		held, err := tx.Get(ctx, key).Result()
		if errors.Is(err, redis.Nil) {
			return nil // expired
		}
		if err != nil || held != token {
			return err // someone else's
		}
		_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			renewed = p.PExpire(ctx, key, lockTTL)
			return nil
		})
		return err
	}, key)
	if errors.Is(err, redis.TxFailedErr) {
		return false, nil // it changed hands after the GET
	}
	if err != nil {
		return false, err
	}
	return renewed != nil && renewed.Val(), nil
}

// unlock releases the lock. A failure is not worth an error for the
// visitors, who have their books: the lock expires within lockTTL anyway.
func (s *Shop) unlock(ctx context.Context, shelf, token string) {
	key := lockKey(shelf)
	_ = s.rdb.Watch(ctx, func(tx *redis.Tx) error {
		held, err := tx.Get(ctx, key).Result()
		if err != nil || held != token {
			return err // gone, or someone else's
		}
		_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.Del(ctx, key)
			return nil
		})
		return err
	}, key)
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
