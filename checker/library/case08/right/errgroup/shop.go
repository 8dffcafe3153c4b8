// Package case08, written with errgroup.SetLimit for the bound and a flight
// table of its own: the first reader of a missing page starts its rebuild in
// the group, which runs at most 20 at once, and every reader of the page
// waits for the flight's done channel within its budget.
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
	"golang.org/x/sync/errgroup"

	"stampede/shop/clock"
	"stampede/shop/events"
)

// TryAgain tells a reader to come back after After.
type TryAgain struct{ After time.Duration }

func (e *TryAgain) Error() string {
	return "the page is being rebuilt; try again in " + e.After.String()
}

// RetryAfter says when to try again.
func (e *TryAgain) RetryAfter() time.Duration { return e.After }

// flight is one page's rebuild; page and err are set before done closes.
type flight struct {
	done chan struct{}
	page string
	err  error
}

// Shop caches event pages in Redis.
type Shop struct {
	db  *events.DB
	rdb *redis.Client
	clk clock.Clock

	group errgroup.Group // at most events.Pool rebuilds at once

	mu      sync.Mutex
	flights map[int]*flight
}

// New returns a shop.
func New(db *events.DB, rdb *redis.Client, clk clock.Clock) *Shop {
	s := &Shop{db: db, rdb: rdb, clk: clk, flights: map[int]*flight{}}
	s.group.SetLimit(events.Pool)
	return s
}

func keyOf(id int) string { return "ev:" + strconv.Itoa(id) }

// expiry is 30 s plus a uniform part of up to 5 s.
func expiry() time.Duration {
	return 30*time.Second + time.Duration(rand.Float64()*float64(5*time.Second))
}

// WarmUp stores every page, one at a time.
func (s *Shop) WarmUp(ctx context.Context, ids []int) error {
	for _, id := range ids {
		page, err := s.db.Page(ctx, id)
		if err != nil {
			return err
		}
		if err := s.rdb.Set(ctx, keyOf(id), page, expiry()).Err(); err != nil {
			return err
		}
	}
	return nil
}

// Page returns an event's page.
func (s *Shop) Page(ctx context.Context, id int) (string, error) {
	page, err := s.rdb.Get(ctx, keyOf(id)).Result()
	switch {
	case err == nil:
		return page, nil
	case !errors.Is(err, redis.Nil):
		return "", err
	}
	budget, cancel := clock.WithTimeout(ctx, s.clk, 2*time.Second)
	defer cancel()
	f := s.join(id)
	select {
	case <-f.done:
		return f.page, f.err
	case <-budget.Done():
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", &TryAgain{After: time.Second/2 + rand.N(time.Second)} // each its own moment
	}
}

// join returns the page's flight, starting it if there is none.
func (s *Shop) join(id int) *flight {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f, ok := s.flights[id]; ok {
		return f
	}
	f := &flight{done: make(chan struct{})}
	s.flights[id] = f
	// The rebuild's 8 s count from now, its wait for a slot included: Go
	// blocks while 20 rebuilds run (so it is called from a goroutine of
	// its own, not under the lock), and a rebuild that got 8 s only once
	// it ran would last 16 behind hung queries.
	ctx, cancel := clock.WithTimeout(context.Background(), s.clk, 8*time.Second)
	go s.group.Go(func() error {
		defer cancel()
		f.page, f.err = s.rebuild(ctx, id)
		s.mu.Lock()
		delete(s.flights, id)
		s.mu.Unlock()
		close(f.done)
		return nil
	})
	return f
}

// rebuild works for whoever is waiting, so no reader's context ends it;
// ctx's deadline does, which gives the group's slot back. A panicking
// query is its readers' error, not the end of the process.
func (s *Shop) rebuild(ctx context.Context, id int) (page string, err error) {
	defer func() {
		if r := recover(); r != nil {
			page, err = "", fmt.Errorf("event %d: the query panicked: %v", id, r)
		}
	}()
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("event %d: waiting for a database connection: %w", id, err)
	}
	if page, err := s.rdb.Get(ctx, keyOf(id)).Result(); err == nil {
		return page, nil
	}
	page, err = s.db.Page(ctx, id)
	if err != nil {
		return "", fmt.Errorf("event %d: %w", id, err)
	}
	// A page Redis will not keep is still the right page.
	_ = s.rdb.Set(ctx, keyOf(id), page, expiry()).Err()
	return page, nil
}
