// Package pubsub is a known-right answer to case 6 whose losers do not poll
// on a timer alone: they subscribe to the shelf's channel, and the holder
// publishes when it has filled the shelf. A loser looks in Redis when a
// message comes or every 100 ms of the clock, whichever is first, and gives
// up after its budget. The holder renews its lock while it reads, in a loop
// it stops through a done channel when the read is over.
//
// Verdict: passes every check.
package pubsub

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
	// fleet. A live holder renews it while it reads (renewUntil): a slow
	// query, up to 5 s, must not lose its lock half way.
	lockTTL = 2 * time.Second
	// flightFor bounds a flight: longer than the slowest query, and short
	// enough that a hung one, and its renewals, end.
	flightFor = 7 * time.Second
	// A loser polls Redis for the holder's fill about every pollEvery, and
	// gives up after waitBudget: by then the holder is slow or dead, and
	// the visitor is better served by "try again" than by a longer wait.
	pollEvery  = 50 * time.Millisecond
	waitBudget = time.Second
	retryAfter = time.Second
	// quietTime is how long an instance leaves the database alone after
	// a query failed.
	quietTime = time.Second
)

// Shop is one instance of the shop.
type Shop struct {
	db      *catalog.DB
	rdb     *redis.Client
	clock   clock.Clock
	flights singleflight.Group // one flight per shelf in this instance

	mu    sync.RWMutex
	local map[string]copyOf    // shelf -> this instance's copy
	quiet map[string]time.Time // shelf -> until when its failed source is left alone
}

type copyOf struct {
	books []string
	until time.Time
}

// New returns an instance of the shop in a fleet that shares the database
// db and the Redis behind rdb. The instance waits and tells the time with
// clk.
func New(db *catalog.DB, rdb *redis.Client, clk clock.Clock) *Shop {
	return &Shop{db: db, rdb: rdb, clock: clk, local: make(map[string]copyOf), quiet: make(map[string]time.Time)}
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
		ctx, cancel := clock.WithTimeout(context.WithoutCancel(ctx), s.clock, flightFor)
		defer cancel()
		books, err = s.fill(ctx, shelf)
		if err != nil && ctx.Err() != nil {
			return nil, &TryAgain{After: retryAfter} // out of time: come back later
		}
		return books, err
	})
	select {
	case r := <-flight:
		if busy, ok := r.Err.(*TryAgain); ok {
			// Each visitor comes back at a moment of its own, around
			// the flight's answer.
			return nil, &TryAgain{After: busy.After/2 + mathrand.N(busy.After)}
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
		if wait := s.quietFor(shelf); wait > 0 {
			return nil, &TryAgain{After: wait}
		}
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
	defer s.unlock(ctx, shelf, token)

	// Second look: the holder before us may have filled the shelf and let
	// go of the lock between our miss and our SET NX.
	if books, ok, err := s.shared(ctx, shelf); err != nil || ok {
		return books, err
	}
	// Renewals keep the lock ours while the query runs. Closing done
	// stops them; they call lose, which ends the query, once they cannot
	// show the lock is ours: no query of ours runs beside the next
	// holder's.
	work, lose := context.WithCancel(ctx)
	defer lose()
	done := make(chan struct{})
	renewing := s.renewUntil(work, shelf, token, done, lose)
	books, err := s.db.Top(work, shelf)
	close(done)
	<-renewing
	if err != nil && ctx.Err() == nil && work.Err() != nil {
		// The lock is another instance's now: it fills the shelf, and
		// says so on the channel. Nothing failed here to back off from.
		return nil, &TryAgain{After: retryAfter}
	}
	if err != nil {
		// This instance leaves the database alone for a second: a
		// backoff of its own, whoever holds the lock next.
		s.mu.Lock()
		s.quiet[shelf] = s.clock.Now().Add(quietTime)
		s.mu.Unlock()
		return nil, err
	}
	if err := s.share(ctx, shelf, books); err != nil {
		// Serve the list anyway; the waiters poll and read the source again.
		slog.Warn("shop: Redis did not store the list", "shelf", shelf, "err", err)
	}
	_ = s.rdb.Publish(ctx, filledChannel(shelf), "filled").Err()
	return books, nil
}

// awaitFill polls Redis for the holder's fill until waitBudget has passed.
// The polls are jittered so that the losers of a burst do not all ask at
// the same instant.
func (s *Shop) awaitFill(ctx context.Context, shelf string) ([]string, error) {
	sub := s.rdb.Subscribe(ctx, filledChannel(shelf))
	defer sub.Close()
	filled := sub.Channel()
	deadline := s.clock.Now().Add(waitBudget)
	for s.clock.Now().Before(deadline) {
		// Look first: the fill may have come before the subscription.
		if books, ok, err := s.shared(ctx, shelf); err != nil || ok {
			return books, err
		}
		tick := make(chan struct{})
		sleepCtx, stop := context.WithCancel(ctx)
		go func() {
			defer close(tick)
			_ = s.clock.Sleep(sleepCtx, 2*pollEvery)
		}()
		select {
		case <-filled:
		case <-tick:
		case <-ctx.Done():
		}
		stop()
		<-tick
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	return nil, &TryAgain{After: retryAfter}
}

// pollAwaitFill is the polling loop this shop replaced.
func (s *Shop) pollAwaitFill(ctx context.Context, shelf string) ([]string, error) {
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

// renewUntil renews the lock every third of lockTTL until done is closed,
// and closes the channel it returns once it has stopped. It calls lose,
// and stops, when a renewal finds the lock gone or another's, or when
// none has landed for a whole lockTTL: by then the lock may have expired
// and passed on.
func (s *Shop) renewUntil(ctx context.Context, shelf, token string, done <-chan struct{}, lose func()) <-chan struct{} {
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		// done ends the wait between renewals, and a renewal under way.
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		go func() {
			select {
			case <-done:
			case <-ctx.Done():
			}
			cancel()
		}()
		ours := s.clock.Now().Add(lockTTL) // the lock is ours until then at least
		for s.clock.Sleep(ctx, lockTTL/3) == nil {
			asked := s.clock.Now()
			rctx, giveUp := clock.WithTimeout(ctx, s.clock, ours.Sub(asked))
			kept, err := renew.Run(rctx, s.rdb, []string{lockKey(shelf)}, token, lockTTL.Milliseconds()).Bool()
			giveUp()
			switch {
			case err == nil && kept:
				ours = asked.Add(lockTTL)
			case ctx.Err() != nil:
				return // done: the read is over
			case err == nil || !s.clock.Now().Before(ours):
				lose()
				return
			}
		}
	}()
	return stopped
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

func shelfKey(shelf string) string { return "shelf:" + shelf }

func filledChannel(shelf string) string { return "filled:" + shelf }

var _ = (*Shop).pollAwaitFill

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

// quietFor says how long this instance still leaves a shelf's source alone
// after a failed query.
func (s *Shop) quietFor(shelf string) time.Duration {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.quiet[shelf].Sub(s.clock.Now())
}

func (s *Shop) remember(shelf string, books []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.local[shelf] = copyOf{books: books, until: s.clock.Now().Add(localTTL)}
}
