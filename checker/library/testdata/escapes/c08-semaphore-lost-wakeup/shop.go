// Package case08 is the reference solution of case 8: a jittered time to
// live on every page, so that pages set together drift apart, and for the
// cold start, where jitter has nothing to spread, one rebuild per page and
// no more rebuilds at once than the database has connections. The chapter is
// docs/08-jittered-ttls.md.
package case08

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"golang.org/x/sync/singleflight"

	"stampede/shop/clock"
	"stampede/shop/events"
)

const (
	// A page lives pageTTL plus a random part of up to ttlJitter. Pages the
	// warm-up stores in the same second then expire over 5 s, not in one.
	pageTTL   = 30 * time.Second
	ttlJitter = 5 * time.Second

	// rebuilds is the database's connection pool. More rebuilds at once
	// than that only queue inside the database, each holding a request
	// open; fewer leave connections idle while readers wait.
	rebuilds = events.Pool

	// A reader waits at most waitBudget for its page; then it is better
	// served by "try again" than by a longer wait.
	waitBudget = time.Second
	retryAfter = time.Second

	// A rebuild gives up after rebuildDeadline, its wait for a connection
	// and its query together. It runs for readers who may have left, so no
	// reader's context ends it; without a deadline of its own, a database
	// that hangs would keep every connection of the pool for ever, and the
	// pages it still answers would be "try again" for good. A query takes
	// 8 ms: 5 s is long past a slow one, and short of pinning the pool.
	rebuildDeadline = 5 * time.Second
)

// Shop is the box office's page cache.
type Shop struct {
	db      *events.DB
	rdb     *redis.Client
	clock   clock.Clock
	flights singleflight.Group // one rebuild per page

	// The database's connections, counted: busy is how many rebuilds hold
	// one (the dashboard's "connections in use" gauge reads it), and a
	// rebuild that finds all of them busy waits for freed, which a rebuild
	// that gives its connection back signals.
	mu    sync.Mutex
	busy  int
	freed chan struct{}
}

// New returns a shop in front of the database db, caching in the Redis
// behind rdb, waiting and telling the time with clk.
func New(db *events.DB, rdb *redis.Client, clk clock.Clock) *Shop {
	return &Shop{db: db, rdb: rdb, clock: clk, freed: make(chan struct{})}
}

// TryAgain is the answer for a reader who waited longer than its budget for
// the page to be rebuilt: come back in a moment (an HTTP handler would send
// 503 with a Retry-After header).
type TryAgain struct {
	After time.Duration
}

func (e *TryAgain) Error() string {
	return fmt.Sprintf("the page is being rebuilt; try again in %v", e.After)
}

// RetryAfter says when to try again.
func (e *TryAgain) RetryAfter() time.Duration { return e.After }

// comeBack is one reader's "try again", with a delay drawn for it alone
// (0.5 to 1.5 s): the readers of a cold start give up together, and told
// one delay they would all come back at the same instant, a second
// stampede a second later.
func comeBack() *TryAgain { return &TryAgain{After: retryAfter/2 + rand.N(retryAfter)} }

// WarmUp fills the cache with the pages of the given events, one at a time:
// the warm-up runs before the shop takes traffic and has no reason to crowd
// the database.
func (s *Shop) WarmUp(ctx context.Context, ids []int) error {
	for _, id := range ids {
		page, err := s.db.Page(ctx, id)
		if err != nil {
			return err
		}
		if err := s.store(ctx, id, page); err != nil {
			return err
		}
	}
	return nil
}

// Page returns an event's page: from Redis, or else from one rebuild shared
// by every reader of the page, within the reader's budget.
func (s *Shop) Page(ctx context.Context, id int) (string, error) {
	if page, ok, err := s.cached(ctx, id); err != nil || ok {
		return page, err
	}
	budget, cancel := clock.WithTimeout(ctx, s.clock, waitBudget)
	defer cancel()
	// The rebuild works for every reader of the page, so it must not end
	// when the reader who started it leaves; it ends at its own deadline.
	flight := s.flights.DoChan(strconv.Itoa(id), func() (page any, err error) {
		// DoChan re-panics a panic on a goroutine nobody can recover
		// (case 5): turn it into the flight's error instead.
		defer func() {
			if r := recover(); r != nil {
				page, err = "", fmt.Errorf("shop: rebuilding event %d panicked: %v", id, r)
			}
		}()
		fctx, cancel := clock.WithTimeout(context.WithoutCancel(ctx), s.clock, rebuildDeadline)
		defer cancel()
		return s.rebuild(fctx, id)
	})
	select {
	case r := <-flight:
		if r.Err != nil {
			return "", r.Err
		}
		return r.Val.(string), nil
	case <-budget.Done():
		if err := ctx.Err(); err != nil {
			return "", err // the reader left; nobody is waiting for an answer
		}
		return "", comeBack()
	}
}

// rebuild is a page's one flight: it waits for a database connection, then
// reads the page and stores it, until ctx's deadline. A flight whose readers
// gave up still fills the page for the next ones.
func (s *Shop) rebuild(ctx context.Context, id int) (string, error) {
	if err := s.acquire(ctx); err != nil {
		return "", fmt.Errorf("shop: waiting for a database connection for event %d: %w", id, err)
	}
	defer s.release()
	// Second look: a flight for this page may have landed between our
	// miss and the start of this one.
	if page, ok, err := s.cached(ctx, id); err != nil || ok {
		return page, err
	}
	page, err := s.db.Page(ctx, id)
	if err != nil {
		return "", err
	}
	if err := s.store(ctx, id, page); err != nil {
		// The page is good; only the cache refused it (a replica in a
		// failover answers READONLY). Serve it, and leave the storing to
		// the next reader's rebuild, but leave a trace.
		slog.WarnContext(ctx, "shop: serving a page Redis would not store", "event", id, "err", err)
	}
	return page, nil
}

// acquire takes one of the database's connections, waiting for one to be
// given back while all are busy, until ctx ends. The count is looked at
// and taken under the lock, so no two rebuilds can take the last one.
func (s *Shop) acquire(ctx context.Context) error {
	for {
		s.mu.Lock()
		if s.busy < rebuilds {
			s.busy++
			s.mu.Unlock()
			return nil
		}
		s.mu.Unlock()
		select {
		case <-s.freed:
			// A connection was given back: look again.
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// release gives a connection back and wakes one rebuild waiting for it,
// if any is; with nobody waiting there is nobody to wake.
func (s *Shop) release() {
	s.mu.Lock()
	s.busy--
	s.mu.Unlock()
	select {
	case s.freed <- struct{}{}:
	default:
	}
}

// Busy is how many database connections the shop's rebuilds hold now.
func (s *Shop) Busy() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.busy
}

// cached reads a page from Redis.
func (s *Shop) cached(ctx context.Context, id int) (string, bool, error) {
	page, err := s.rdb.Get(ctx, key(id)).Result()
	if errors.Is(err, redis.Nil) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("shop: reading event %d from Redis: %w", id, err)
	}
	return page, true, nil
}

// store writes a page to Redis with a time to live of its own: a fresh
// draw for every page, in milliseconds (go-redis sends PX for a duration
// that is not whole seconds), so that no two pages need share an expiry.
func (s *Shop) store(ctx context.Context, id int, page string) error {
	ttl := pageTTL + rand.N(ttlJitter)
	if err := s.rdb.Set(ctx, key(id), page, ttl).Err(); err != nil {
		return fmt.Errorf("shop: writing event %d to Redis: %w", id, err)
	}
	return nil
}

func key(id int) string { return "event:" + strconv.Itoa(id) }
