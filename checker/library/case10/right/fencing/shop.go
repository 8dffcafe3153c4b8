// Package fencing is a known-right answer to case 10, written otherwise
// than the reference: the lease is a fencing counter. Each book has an
// epoch in Redis that every write bumps after its commit, in the same
// script that deletes the price. A filler notes the epoch before it reads
// the row, and its fill is stored only if the epoch has not moved: a
// write that committed since the read has bumped it. A lock (SET NX PX)
// keeps the fill to one instance at a time.
package fencing

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	mathrand "math/rand/v2"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"golang.org/x/sync/singleflight"

	"stampede/shop/catalog"
	"stampede/shop/clock"
)

const (
	priceTTL = 30 * time.Second
	lockTTL  = 3 * time.Second
	epochTTL = time.Hour // long enough to outlive any read; a lost epoch only refuses a fill
	poll     = 40 * time.Millisecond
	patience = 25 // polls before giving up
)

// ErrConflict is a fill refused because a write committed during the read.
var ErrConflict = errors.New("shop: the price changed while it was read")

// ErrTryLater is what a visitor gets when the fill never came.
var ErrTryLater = errors.New("shop: price unavailable, try again")

// TryAgain is a visitor's answer past its budget: come back in After.
type TryAgain struct{ After time.Duration }

func (e *TryAgain) Error() string             { return "shop: busy; try again in " + e.After.String() }
func (e *TryAgain) RetryAfter() time.Duration { return e.After }

// Shop is one instance of the shop.
type Shop struct {
	db    *catalog.DB
	rdb   *redis.Client
	clock clock.Clock

	lookups singleflight.Group
	mu      sync.Mutex
	waiting map[string]*waiters
}

// New returns an instance of the shop.
func New(db *catalog.DB, rdb *redis.Client, clk clock.Clock) *Shop {
	return &Shop{db: db, rdb: rdb, clock: clk, waiting: map[string]*waiters{}}
}

func keys(book string) (price, epoch, lock string) {
	tag := "{" + book + "}" // one hash tag: one Redis Cluster slot for the three
	return "p:" + tag, "epoch:" + tag, "fill:" + tag
}

// invalidate deletes the price and moves the epoch on, in one step.
var invalidate = redis.NewScript(`
redis.call("DEL", KEYS[1])
redis.call("INCR", KEYS[2])
redis.call("PEXPIRE", KEYS[2], ARGV[1])
return 1`)

// fillAt stores the price only if the epoch is still the one the filler
// saw before reading the row.
var fillAt = redis.NewScript(`
local e = redis.call("GET", KEYS[2]) or ""
if e ~= ARGV[1] then
	return 0
end
redis.call("SET", KEYS[1], ARGV[2], "PX", ARGV[3])
return 1`)

// errDB marks a fill whose database failed (not its visitor).
var errDB = errors.New("shop: the database failed")

// expireIfMine shortens the caller's lock to ARGV[2] ms.
var expireIfMine = redis.NewScript(`
if redis.call("GET", KEYS[1]) == ARGV[1] then
	return redis.call("PEXPIRE", KEYS[1], ARGV[2])
end
return 0`)

var unlock = redis.NewScript(`
if redis.call("GET", KEYS[1]) == ARGV[1] then
	return redis.call("DEL", KEYS[1])
end
return 0`)

// Visitors of a book in this instance share one lookup (singleflight).
// The lookup runs on a context of its own, which ends once every visitor
// of the book has left: the first to leave must not end it for the
// others, and the last must not leave it holding a lease for nobody.
type waiters struct {
	n      int
	ctx    context.Context
	cancel context.CancelFunc
}

// answer is what a lookup hands its visitors: the price, and when the
// lookup began.
type answer struct {
	price int
	began time.Time
}

// Price returns a book's price in cents.
func (s *Shop) Price(ctx context.Context, book string) (int, error) {
	came := s.clock.Now()
	w := s.arrive(ctx, book)
	defer s.depart(book, w)
	for {
		ch := s.lookups.DoChan(book, func() (any, error) {
			began := s.clock.Now()
			price, err := s.lookup(w.ctx, book)
			return answer{price: price, began: began}, err
		})
		select {
		case r := <-ch:
			// A lookup that began before this visitor came may end, out
			// of budget or with a failed read, before the visitor has
			// waited its own budget: then it waits on, in a lookup that
			// begins after it came.
			a := r.Val.(answer)
			if r.Err != nil && a.began.Before(came) && s.clock.Now().Sub(came) < patience*poll {
				continue
			}
			if errors.Is(r.Err, ErrTryLater) {
				// The lookup's visitors share its failure, not their
				// come-back.
				return 0, &TryAgain{After: time.Second/2 + mathrand.N(time.Second)}
			}
			if r.Err != nil {
				return 0, r.Err
			}
			return a.price, nil
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
}

// arrive counts a visitor of the book in.
func (s *Shop) arrive(ctx context.Context, book string) *waiters {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := s.waiting[book]
	if w == nil {
		wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		w = &waiters{ctx: wctx, cancel: cancel}
		s.waiting[book] = w
	}
	w.n++
	return w
}

// depart counts a visitor out; the last one ends the lookup, and forgets
// it, so that a visitor who comes next starts a new one.
func (s *Shop) depart(book string, w *waiters) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if w.n--; w.n > 0 {
		return
	}
	w.cancel()
	delete(s.waiting, book)
	s.lookups.Forget(book)
}

// lookup is the work of the book's one lookup in this instance.
func (s *Shop) lookup(ctx context.Context, book string) (int, error) {
	priceKey, _, lockKey := keys(book)
	for tries := 0; tries < patience; {
		v, err := s.rdb.Get(ctx, priceKey).Int()
		if err == nil {
			return v, nil
		}
		if !errors.Is(err, redis.Nil) {
			return 0, fmt.Errorf("shop: reading %s: %w", book, err)
		}
		me := rand.Text()
		ok, err := s.rdb.SetNX(ctx, lockKey, me, lockTTL).Result()
		if err != nil {
			return 0, fmt.Errorf("shop: locking %s: %w", book, err)
		}
		if !ok {
			tries++
			if err := s.clock.Sleep(ctx, poll/2+mathrand.N(poll)); err != nil {
				return 0, err
			}
			continue
		}
		price, err := s.fill(ctx, book)
		if errors.Is(err, errDB) {
			// The database failed: the lock stays a moment, so the fleet
			// tries it a few times a second rather than once per visitor.
			s.unlockIn(ctx, lockKey, me, 300*time.Millisecond)
		} else {
			s.unlock(ctx, lockKey, me)
		}
		if !errors.Is(err, ErrConflict) {
			return price, err
		}
		tries++ // a refused fill is a try too: writes may outpace reads
	}
	return 0, ErrTryLater
}

func (s *Shop) fill(ctx context.Context, book string) (int, error) {
	priceKey, epochKey, _ := keys(book)
	epoch, err := s.rdb.Get(ctx, epochKey).Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		return 0, fmt.Errorf("shop: reading the epoch of %s: %w", book, err)
	}
	// A read that has not answered in 15 s will not: give it up, and the
	// visitor its error.
	rctx, cancel := clock.WithTimeout(ctx, s.clock, 15*time.Second)
	defer cancel()
	row, err := s.db.Row(rctx, book)
	if err != nil {
		if ctx.Err() == nil {
			err = fmt.Errorf("%w: %w", errDB, err)
		}
		return 0, err
	}
	n, err := fillAt.Run(ctx, s.rdb, []string{priceKey, epochKey}, epoch, strconv.Itoa(row.Price), priceTTL.Milliseconds()).Int()
	if err != nil {
		return 0, fmt.Errorf("shop: storing %s: %w", book, err)
	}
	if n == 0 {
		return 0, ErrConflict
	}
	return row.Price, nil
}

// SetPrice commits, then deletes the price and bumps the epoch.
func (s *Shop) SetPrice(ctx context.Context, book string, price int) error {
	if _, err := s.db.SetPrice(ctx, book, price); err != nil {
		return err
	}
	priceKey, epochKey, _ := keys(book)
	// Committed is committed, whether the caller waits or not.
	ctx, cancel := clock.WithTimeout(context.WithoutCancel(ctx), s.clock, 2*time.Second)
	defer cancel()
	if err := invalidate.Run(ctx, s.rdb, []string{priceKey, epochKey}, epochTTL.Milliseconds()).Err(); err != nil {
		return fmt.Errorf("shop: invalidating %s: %w", book, err)
	}
	return nil
}

// unlockIn lets the lock go after d instead of now: the fleet's backoff
// from a failing database.
func (s *Shop) unlockIn(ctx context.Context, lockKey, me string, d time.Duration) {
	ctx, cancel := clock.WithTimeout(context.WithoutCancel(ctx), s.clock, lockTTL)
	defer cancel()
	expireIfMine.Run(ctx, s.rdb, []string{lockKey}, me, d.Milliseconds())
}

// unlock releases the lock on a context of its own: the visitor may have
// left, which is often why the fill failed, and the lock must go all the
// same. Past the lock's time to live there is nothing left to release.
func (s *Shop) unlock(ctx context.Context, lockKey, me string) {
	ctx, cancel := clock.WithTimeout(context.WithoutCancel(ctx), s.clock, lockTTL)
	defer cancel()
	unlock.Run(ctx, s.rdb, []string{lockKey}, me)
}

// Relay sends the outbox's invalidations until ctx ends: a writer that
// died after its commit never moved the epoch on, so the relay does. It
// backs off while Redis fails, up to two seconds between looks.
func (s *Shop) Relay(ctx context.Context) error {
	idle := 100 * time.Millisecond
	wait := idle
	for s.clock.Sleep(ctx, wait) == nil {
		wait = idle
		if err := s.relayOnce(ctx); err != nil {
			wait = min(4*wait, 2*time.Second)
		}
	}
	return nil
}

// relayOnce sends every pending invalidation, each marked sent once Redis
// has it.
func (s *Shop) relayOnce(ctx context.Context) error {
	ctx, cancel := clock.WithTimeout(ctx, s.clock, 2*time.Second)
	defer cancel()
	pending, err := s.db.Pending(ctx)
	if err != nil {
		return err
	}
	for _, inv := range pending {
		priceKey, epochKey, _ := keys(inv.Book)
		if err := invalidate.Run(ctx, s.rdb, []string{priceKey, epochKey}, epochTTL.Milliseconds()).Err(); err != nil {
			return fmt.Errorf("shop: relaying the invalidation of %s: %w", inv.Book, err)
		}
		if err := s.db.MarkSent(ctx, inv.ID); err != nil {
			return err
		}
	}
	return nil
}
