// Package case08, written as a worker pool: 20 workers, one per database
// connection, take rebuilds from a queue. Single-flight sends each missing
// page to the queue once; readers wait for it within their budget.
package case08

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"golang.org/x/sync/singleflight"

	"stampede/shop/clock"
	"stampede/shop/events"
)

// TryAgain tells a reader to come back after After.
type TryAgain struct{ After time.Duration }

func (e *TryAgain) Error() string { return "try again in " + e.After.String() }

// RetryAfter says when to try again.
func (e *TryAgain) RetryAfter() time.Duration { return e.After }

type job struct {
	ctx   context.Context // the rebuild's deadline, from its start
	id    int
	reply chan result
}

type result struct {
	page string
	err  error
}

// Shop caches event pages in Redis.
type Shop struct {
	db  *events.DB
	rdb *redis.Client
	clk clock.Clock

	flights singleflight.Group
	jobs    chan job
	start   sync.Once
}

// New returns a shop.
func New(db *events.DB, rdb *redis.Client, clk clock.Clock) *Shop {
	return &Shop{db: db, rdb: rdb, clk: clk, jobs: make(chan job)}
}

// workers starts the pool the first time a page is missing.
func (s *Shop) workers() {
	s.start.Do(func() {
		for range events.Pool {
			go func() {
				for j := range s.jobs {
					page, err := s.fetch(j.ctx, j.id)
					j.reply <- result{page, err}
				}
			}()
		}
	})
}

var rng = struct {
	sync.Mutex
	*rand.Rand
}{Rand: rand.New(rand.NewSource(time.Now().UnixNano()))}

// ttl draws a page's time to live: 30 000 to 35 000 ms.
func ttl() time.Duration {
	rng.Lock()
	defer rng.Unlock()
	return time.Duration(30000+rng.Int63n(5001)) * time.Millisecond
}

func cacheKey(id int) string { return "box-office:page:" + strconv.Itoa(id) }

// WarmUp stores every page.
func (s *Shop) WarmUp(ctx context.Context, ids []int) error {
	for _, id := range ids {
		page, err := s.db.Page(ctx, id)
		if err != nil {
			return err
		}
		if err := s.rdb.Set(ctx, cacheKey(id), page, ttl()).Err(); err != nil {
			return err
		}
	}
	return nil
}

// fetch runs on a worker, for whoever waits, until ctx's deadline.
func (s *Shop) fetch(ctx context.Context, id int) (page string, err error) {
	// A query that panics must not take the worker, or the process, down.
	defer func() {
		if r := recover(); r != nil {
			page, err = "", fmt.Errorf("page %d: query panicked: %v", id, r)
		}
	}()
	if page, err := s.rdb.Get(ctx, cacheKey(id)).Result(); err == nil {
		return page, nil
	}
	page, err = s.db.Page(ctx, id)
	if err != nil {
		return "", err
	}
	// Served whether or not Redis kept it.
	_ = s.rdb.Set(ctx, cacheKey(id), page, ttl()).Err()
	return page, nil
}

// Page returns an event's page.
func (s *Shop) Page(ctx context.Context, id int) (string, error) {
	if page, err := s.rdb.Get(ctx, cacheKey(id)).Result(); err == nil {
		return page, nil
	} else if !errors.Is(err, redis.Nil) {
		return "", fmt.Errorf("redis: %w", err)
	}
	s.workers()
	ch := s.flights.DoChan(strconv.Itoa(id), func() (any, error) {
		// 10 s from now, the wait for a free worker included: with every
		// worker on a hung query, a rebuild that waited first and then
		// got 10 s of its own would last 20.
		ctx, cancel := clock.WithTimeout(context.Background(), s.clk, 10*time.Second)
		defer cancel()
		j := job{ctx: ctx, id: id, reply: make(chan result, 1)}
		select {
		case s.jobs <- j:
		case <-ctx.Done():
			return "", fmt.Errorf("page %d: waiting for a database connection: %w", id, ctx.Err())
		}
		r := <-j.reply
		return r.page, r.err
	})
	timer := make(chan struct{})
	wait, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		if s.clk.Sleep(wait, time.Second) == nil {
			close(timer)
		}
	}()
	select {
	case r := <-ch:
		if r.Err != nil {
			return "", r.Err
		}
		return r.Val.(string), nil
	case <-timer:
		// Whole milliseconds, 250 to 749: each reader its own.
		return "", &TryAgain{After: time.Duration(250+rand.Intn(500)) * time.Millisecond}
	case <-ctx.Done():
		return "", ctx.Err()
	}
}
