// Package case08, known-wrong: the flight table is the shop's own, and a
// flight leaves it only when it succeeds. A failed flight stays, "so that its
// readers do not hammer a failing database": every later reader of the page
// joins the landed flight and gets its old error at once, and the page never
// recovers. No hand-built check sent a reader after a failed query.
//
// Verdict: fails "failed-again".
package case08

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

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
)

// Shop is the box office's page cache.
type Shop struct {
	db    *events.DB
	rdb   *redis.Client
	clock clock.Clock
	slots chan struct{} // one token per database connection

	mu      sync.Mutex
	flights map[int]*flight // one rebuild per page
}

// New returns a shop in front of the database db, caching in the Redis
// behind rdb, waiting and telling the time with clk.
func New(db *events.DB, rdb *redis.Client, clk clock.Clock) *Shop {
	return &Shop{db: db, rdb: rdb, clock: clk, slots: make(chan struct{}, rebuilds), flights: map[int]*flight{}}
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

// flight is one page's rebuild: its readers wait for done, then read page
// and err.
type flight struct {
	done chan struct{}
	page string
	err  error
}

// Page returns an event's page: from Redis, or else from one rebuild shared
// by every reader of the page, within the reader's budget.
func (s *Shop) Page(ctx context.Context, id int) (string, error) {
	if page, ok, err := s.cached(ctx, id); err != nil || ok {
		return page, err
	}
	budget, cancel := clock.WithTimeout(ctx, s.clock, waitBudget)
	defer cancel()
	s.mu.Lock()
	f, ok := s.flights[id]
	if !ok {
		f = &flight{done: make(chan struct{})}
		s.flights[id] = f
		// The rebuild works for every reader of the page, so it must not
		// end when the reader who started it leaves.
		go s.fly(context.WithoutCancel(ctx), id, f)
	}
	s.mu.Unlock()
	select {
	case <-f.done:
		return f.page, f.err
	case <-budget.Done():
		if err := ctx.Err(); err != nil {
			return "", err // the reader left; nobody is waiting for an answer
		}
		return "", &TryAgain{After: retryAfter}
	}
}

// fly runs a page's flight and lands it. A page that is in Redis needs no
// flight; a failed one stays on the table, so that the page's readers get
// its answer at once instead of sending the database another query.
func (s *Shop) fly(ctx context.Context, id int, f *flight) {
	defer close(f.done)
	defer func() {
		if r := recover(); r != nil {
			f.page, f.err = "", fmt.Errorf("shop: rebuilding event %d panicked: %v", id, r)
		}
	}()
	f.page, f.err = s.rebuild(ctx, id)
	if f.err == nil {
		s.mu.Lock()
		delete(s.flights, id)
		s.mu.Unlock()
	}
}

// rebuild waits for a database connection, then reads the page and stores
// it.
func (s *Shop) rebuild(ctx context.Context, id int) (string, error) {
	s.slots <- struct{}{}
	defer func() { <-s.slots }()
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
		return "", err
	}
	return page, nil
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
