// Package case08, written with x/sync/semaphore: a weighted semaphore of 20
// guards the database, and each reader's budget is a timer goroutine on the
// shop's clock.
package case08

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/redis/go-redis/v9"
	"golang.org/x/sync/semaphore"
	"golang.org/x/sync/singleflight"

	"stampede/shop/clock"
	"stampede/shop/events"
)

// TryAgain tells a reader to come back after After.
type TryAgain struct{ After time.Duration }

func (e *TryAgain) Error() string { return fmt.Sprintf("busy; try again in %v", e.After) }

// RetryAfter says when to try again.
func (e *TryAgain) RetryAfter() time.Duration { return e.After }

// Shop caches event pages in Redis.
type Shop struct {
	db    *events.DB
	rdb   *redis.Client
	clk   clock.Clock
	sem   *semaphore.Weighted
	group singleflight.Group
}

// New returns a shop.
func New(db *events.DB, rdb *redis.Client, clk clock.Clock) *Shop {
	return &Shop{db: db, rdb: rdb, clk: clk, sem: semaphore.NewWeighted(events.Pool)}
}

func pageKey(id int) string { return fmt.Sprintf("page:event:%d", id) }

// lifetime is 30 s and up to 5 s more, to the nanosecond.
func lifetime() time.Duration {
	return 30*time.Second + time.Duration(rand.Int64N(int64(5*time.Second)+1))
}

// WarmUp stores every page.
func (s *Shop) WarmUp(ctx context.Context, ids []int) error {
	for _, id := range ids {
		if _, err := s.load(ctx, id); err != nil {
			return err
		}
	}
	return nil
}

func (s *Shop) load(ctx context.Context, id int) (string, error) {
	if err := s.sem.Acquire(ctx, 1); err != nil {
		return "", err
	}
	defer s.sem.Release(1)
	if page, err := s.rdb.Get(ctx, pageKey(id)).Result(); err == nil {
		return page, nil
	}
	page, err := s.db.Page(ctx, id)
	if err != nil {
		return "", err
	}
	return page, s.rdb.Set(ctx, pageKey(id), page, lifetime()).Err()
}

// after returns a channel closed once d has passed on the shop's clock.
func (s *Shop) after(ctx context.Context, d time.Duration) <-chan struct{} {
	c := make(chan struct{})
	go func() {
		if s.clk.Sleep(ctx, d) == nil {
			close(c)
		}
	}()
	return c
}

// Page returns an event's page.
func (s *Shop) Page(ctx context.Context, id int) (string, error) {
	page, err := s.rdb.Get(ctx, pageKey(id)).Result()
	if err == nil {
		return page, nil
	}
	if !errors.Is(err, redis.Nil) {
		return "", err
	}
	ch := s.group.DoChan(fmt.Sprint(id), func() (v any, err error) {
		// DoChan would panic again on a goroutine nobody can recover.
		defer func() {
			if r := recover(); r != nil {
				v, err = nil, fmt.Errorf("shop: loading event %d panicked: %v", id, r)
			}
		}()
		// Detached from the reader, bounded on its own.
		lctx, cancel := clock.WithTimeout(context.WithoutCancel(ctx), s.clk, 3*time.Second)
		defer cancel()
		page, err := s.load(lctx, id)
		if page != "" {
			err = nil // the page is right even when Redis did not keep it
		}
		return page, err
	})
	wait, stop := context.WithCancel(ctx)
	defer stop()
	select {
	case res := <-ch:
		if res.Err != nil {
			return "", res.Err
		}
		return res.Val.(string), nil
	case <-s.after(wait, 1500*time.Millisecond):
		return "", &TryAgain{After: time.Second + rand.N(2*time.Second)} // spread the come-backs
	case <-ctx.Done():
		return "", ctx.Err()
	}
}
