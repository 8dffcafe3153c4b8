// Package flightbudget is a known-wrong answer to case 8, written by a
// student the checker's authors had not seen: a flight table of its own,
// with the budget on the flight rather than on each reader. When a flight
// starts, a goroutine sleeps the budget on the shop's clock and then
// closes the flight's "late" channel, and every reader of the flight
// answers *TryAgain when it closes. The budget counts from the flight's
// start, not from the reader's arrival: a reader who joins 0.95 s after
// the flight began is sent away 0.05 s later.
//
// Verdict: fails "late-reader".
package flightbudget

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

// flight is one page's rebuild and the readers who wait for it.
type flight struct {
	done chan struct{} // closed when page and err are set
	late chan struct{} // closed when the flight has run past the budget
	page string
	err  error
}

// New returns a shop in front of the database db, caching in the Redis
// behind rdb, waiting and telling the time with clk.
func New(db *events.DB, rdb *redis.Client, clk clock.Clock) *Shop {
	return &Shop{db: db, rdb: rdb, clock: clk, slots: make(chan struct{}, rebuilds), flights: make(map[int]*flight)}
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

// Page returns an event's page: from Redis, or else from one rebuild shared
// by every reader of the page, within the reader's budget.
func (s *Shop) Page(ctx context.Context, id int) (string, error) {
	if page, ok, err := s.cached(ctx, id); err != nil || ok {
		return page, err
	}
	f := s.join(ctx, id)
	select {
	case <-f.done:
		return f.page, f.err
	case <-f.late:
		return "", &TryAgain{After: retryAfter}
	case <-ctx.Done():
		return "", ctx.Err() // the reader left; nobody is waiting for an answer
	}
}

// join returns the page's flight, starting it (and its one budget timer)
// if there is none.
func (s *Shop) join(ctx context.Context, id int) *flight {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f, ok := s.flights[id]; ok {
		return f
	}
	f := &flight{done: make(chan struct{}), late: make(chan struct{})}
	s.flights[id] = f
	bg := context.WithoutCancel(ctx)
	timer, stop := context.WithCancel(bg)
	go func() {
		if s.clock.Sleep(timer, waitBudget) == nil {
			close(f.late)
		}
	}()
	go func() {
		defer func() {
			if r := recover(); r != nil {
				f.page, f.err = "", fmt.Errorf("shop: rebuilding event %d panicked: %v", id, r)
			}
			stop()
			s.mu.Lock()
			delete(s.flights, id)
			s.mu.Unlock()
			close(f.done)
		}()
		f.page, f.err = s.rebuild(bg, id)
	}()
	return f
}

// rebuild is a page's one flight: it waits for a database connection, then
// reads the page and stores it. The wait itself has no bound: the readers
// have theirs, and a flight whose readers gave up still fills the page for
// the next ones.
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
