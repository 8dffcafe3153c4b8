// Package setnxget is a known-right answer to case 6 that takes the lock with
// SET ... NX GET PX (Redis 7): one command that either takes the lock or
// says who holds it. The holder sends its query off on a goroutine and,
// while it waits for the answer, renews the lock itself.
//
// Verdict: passes every check.
package setnxget

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	mathrand "math/rand/v2"
	"strings"
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
	// fleet. A live holder renews it while its query runs (readHeld), so
	// a query slower than lockTTL, up to 5 s, keeps the lock.
	lockTTL = 2 * time.Second
	// flightTimeout bounds a flight: longer than the slowest query, and
	// short enough that a hung one ends, and its renewals with it.
	flightTimeout = 6 * time.Second
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

// errBusy is a flight's "out of time": its visitors turn it into a
// *TryAgain each.
var errBusy = errors.New("shop: the shelf is being rebuilt elsewhere")

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
			return nil, errBusy // out of time: come back later
		}
		return books, err
	})
	select {
	case r := <-flight:
		if errors.Is(r.Err, errBusy) {
			// The flight's visitors share its "busy"; each gets a delay of
			// its own, so that they do not all come back at once.
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
	held, err := s.rdb.SetArgs(ctx, lockKey(shelf), token, redis.SetArgs{Mode: "NX", Get: true, TTL: lockTTL}).Result()
	switch {
	case errors.Is(err, redis.Nil): // nobody held it: it is ours now
	case err != nil:
		return nil, fmt.Errorf("shop: taking the lock on %s: %w", shelf, err)
	case strings.HasPrefix(held, downMark):
		// The last holder's query failed a moment ago: no fill is coming,
		// and the database wants a rest. Say so at once.
		return nil, errBusy
	default: // the reply is the holder's token
		return s.awaitFill(ctx, shelf)
	}
	failed := false
	defer func() {
		if !failed {
			s.unlock(ctx, shelf, token)
		}
	}()

	// Second look: the holder before us may have filled the shelf and let
	// go of the lock between our miss and our SET NX.
	if books, ok, err := s.shared(ctx, shelf); err != nil || ok {
		return books, err
	}
	books, lost, err := s.readHeld(ctx, shelf, token)
	if err != nil && lost {
		// The lock is another instance's now, and so is the fill. There
		// is nothing of ours to release, or to mark.
		failed = true
		return nil, errBusy
	}
	if err != nil {
		// Not released: the lock becomes a mark of the failure for
		// downFor, so that for that long the fleet neither queries nor
		// waits. If the mark cannot be set, the lock's own expiry does
		// the same, only later.
		failed = true
		_ = markDown.Run(ctx, s.rdb, []string{lockKey(shelf)}, token, downMark+token, downFor.Milliseconds()).Err()
		return nil, err
	}
	if err := s.share(ctx, shelf, books); err != nil {
		// A list Redis will not keep is still the right list.
		slog.WarnContext(ctx, "shop: share failed", "shelf", shelf, "err", err)
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
	return nil, errBusy
}

// readHeld runs the query on a goroutine of its own and, until it
// answers, renews the lock from here every third of lockTTL. When it
// cannot show the lock is ours (a renewal finds it gone or another's, or
// none lands for a whole lockTTL), it ends the query and reports the lock
// lost: no query of ours runs beside the next holder's. The renewals stop
// when the query answers. A panic in the query is panicked again here,
// where the flight recovers it: on the query's goroutine nobody could.
func (s *Shop) readHeld(ctx context.Context, shelf, token string) (books []string, lost bool, err error) {
	work, cancel := context.WithCancel(ctx)
	defer cancel()
	// reading ends when the query answers, and the renewals with it.
	reading, answered := context.WithCancel(work)
	type answer struct {
		books  []string
		err    error
		panicV any
	}
	got := make(chan answer, 1)
	go func() {
		var a answer
		defer func() {
			a.panicV = recover()
			got <- a
			answered()
		}()
		a.books, a.err = s.db.Top(work, shelf)
	}()
	ours := s.clock.Now().Add(lockTTL) // the lock is ours at least until then
	for s.clock.Sleep(reading, lockTTL/3) == nil {
		asked := s.clock.Now()
		rctx, giveUp := clock.WithTimeout(reading, s.clock, ours.Sub(asked))
		kept, rerr := renew.Run(rctx, s.rdb, []string{lockKey(shelf)}, token, lockTTL.Milliseconds()).Bool()
		giveUp()
		if rerr == nil && kept {
			ours = asked.Add(lockTTL)
			continue
		}
		if reading.Err() != nil {
			break // the query answered meanwhile
		}
		if rerr == nil || !s.clock.Now().Before(ours) {
			lost = true
			cancel()
			break
		}
	}
	a := <-got
	if a.panicV != nil {
		panic(a.panicV)
	}
	return a.books, lost, a.err
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

// markDown turns our lock into a mark that the database failed, if the lock
// is still ours, in one step as release does.
var markDown = redis.NewScript(`
if redis.call("GET", KEYS[1]) == ARGV[1] then
	return redis.call("SET", KEYS[1], ARGV[2], "PX", ARGV[3])
end
return false`)

// downMark begins the value of a lock that marks a failed query, and
// downFor is how long it stays: the fleet's backoff.
const (
	downMark = "down:"
	downFor  = time.Second
)

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
