// Package redsync is a known-right answer to case 6 built on a hand-written
// mutex in the style of the redsync library: Lock tries SET NX PX a bounded
// number of times with a jittered delay, Unlock is a compare-and-delete
// script, and Extend a compare-and-PEXPIRE one, which the holder calls
// while it reads. A loser's Lock succeeds once the holder has released,
// and the second look then finds the holder's fill.
//
// Verdict: passes every check.
package redsync

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
	// fleet. A live holder extends it while it reads (keepLocked), so a
	// query slower than lockTTL, up to 5 s, keeps its lock.
	lockTTL = 2 * time.Second
	// flightTimeout bounds a flight: past the slowest query, so a slow
	// one is not given up, and short enough that a hung one ends, and
	// stops extending its lock.
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
		if _, ok := r.Err.(*TryAgain); ok {
			return nil, &TryAgain{After: time.Second + mathrand.N(2*time.Second)} // spread the come-backs
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
	m := &mutex{rdb: s.rdb, clk: s.clock, name: lockKey(shelf), expiry: lockTTL, tries: 20, delay: pollEvery}
	if err := m.Lock(ctx); err != nil {
		if errors.Is(err, errTaken) {
			return nil, &TryAgain{After: retryAfter}
		}
		return nil, err
	}
	// Unlocked on every way out but a failed query: then the mutex
	// expires by itself, and no one in the fleet asks the database again
	// before it does.
	queryFailed := false
	defer func() {
		if !queryFailed {
			m.Unlock(ctx)
		}
	}()
	if books, ok, err := s.shared(ctx, shelf); err != nil || ok {
		return books, err
	}
	// The read runs while the mutex is ours, and no longer: keepLocked
	// extends it, and ends work once it cannot tell the mutex is still
	// ours, so that no read of ours runs beside the next holder's.
	work, stop := s.keepLocked(ctx, m)
	books, err := s.db.Top(work, shelf)
	lost := work.Err() != nil && ctx.Err() == nil // asked before stop ends work
	stop()
	if err != nil && lost {
		// The mutex passed to another instance, which fills the shelf.
		return nil, &TryAgain{After: retryAfter}
	}
	if err != nil {
		queryFailed = true
		return nil, err
	}
	if err := s.share(ctx, shelf, books); err != nil {
		slog.WarnContext(ctx, "serving a list Redis refused", "shelf", shelf, "err", err)
	}
	return books, nil
}

// errTaken is what Lock returns when every try found the lock held.
var errTaken = errors.New("lock: taken")

// mutex is a lock in Redis in the style of redsync: a random value, SET
// NX PX, bounded retries, and atomic compare-and-delete and
// compare-and-extend scripts.
type mutex struct {
	rdb    *redis.Client
	clk    clock.Clock
	name   string
	value  string
	expiry time.Duration
	tries  int
	delay  time.Duration
	until  time.Time // the mutex is ours at least until then
}

// Lock takes the mutex, retrying with a jittered delay.
func (m *mutex) Lock(ctx context.Context) error {
	m.value = rand.Text()
	for i := range m.tries {
		if i > 0 {
			if err := m.clk.Sleep(ctx, m.delay/2+mathrand.N(m.delay)); err != nil {
				return err
			}
		}
		// Counted from before the command is sent: the expiry began no
		// earlier.
		start := m.clk.Now()
		ok, err := m.rdb.SetNX(ctx, m.name, m.value, m.expiry).Result()
		if err != nil {
			return fmt.Errorf("lock %s: %w", m.name, err)
		}
		if ok {
			m.until = start.Add(m.expiry)
			return nil
		}
	}
	return errTaken
}

// Extend gives the mutex its whole expiry again, if it is still ours,
// and reports whether it was. The check and the PEXPIRE are one script:
// a plain PEXPIRE could keep another holder's lock alive.
func (m *mutex) Extend(ctx context.Context) (bool, error) {
	start := m.clk.Now()
	n, err := extend.Run(ctx, m.rdb, []string{m.name}, m.value, m.expiry.Milliseconds()).Int()
	if err != nil {
		return false, fmt.Errorf("extend %s: %w", m.name, err)
	}
	if n == 0 {
		return false, nil
	}
	m.until = start.Add(m.expiry)
	return true, nil
}

// Until says until when the mutex is surely ours: its expiry, counted
// from the last Lock or Extend that landed.
func (m *mutex) Until() time.Time { return m.until }

// Unlock releases the mutex if it is still ours.
func (m *mutex) Unlock(ctx context.Context) {
	_ = release.Run(ctx, m.rdb, []string{m.name}, m.value).Err()
}

// keepLocked extends m every third of its expiry while the holder reads.
// The context it returns ends when m is lost: an Extend finds it gone or
// another's, or m.Until passes with no Extend landed (Redis is slow or
// away, and the mutex may have expired). stop ends the extensions and
// waits for them, so that none is sent after the read. Only its
// goroutine touches m meanwhile.
func (s *Shop) keepLocked(ctx context.Context, m *mutex) (work context.Context, stop func()) {
	work, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer cancel()
		for m.clk.Sleep(work, m.expiry/3) == nil {
			try, giveUp := clock.WithTimeout(work, m.clk, m.Until().Sub(m.clk.Now()))
			ok, err := m.Extend(try)
			giveUp()
			if err == nil && !ok {
				return // taken
			}
			if err != nil && !m.clk.Now().Before(m.Until()) {
				return // it may have expired
			}
		}
	}()
	return work, func() { cancel(); wg.Wait() }
}

// oldRebuild is the rebuild this shop replaced.
func (s *Shop) oldRebuild(ctx context.Context, shelf string) ([]string, error) {
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
	books, err := s.db.Top(ctx, shelf)
	if err != nil {
		return nil, err
	}
	if err := s.share(ctx, shelf, books); err != nil {
		slog.WarnContext(ctx, "serving a list Redis refused", "shelf", shelf, "err", err)
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

// extend renews the lock only if it still holds our token.
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

func shelfKey(shelf string) string { return "shelf:" + shelf }

var _ = (*Shop).oldRebuild

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
