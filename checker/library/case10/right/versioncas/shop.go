// Package versioncas is a known-right answer to case 10, written otherwise
// than the reference: case 6's regeneration lock for the stampede, and a
// versioned compare-and-set for the stale set. Redis holds the price with
// the version of the row it came from, "10:1499". After its commit, the
// write path puts a tombstone there that carries the new version, "10:":
// a delete that remembers which version deleted. A fill is stored only if
// its version is not older than what Redis holds, so a read that read
// version 9 cannot store it over the tombstone of version 10.
package versioncas

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	mathrand "math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"golang.org/x/sync/singleflight"

	"stampede/shop/catalog"
	"stampede/shop/clock"
)

const (
	priceTTL   = 30 * time.Second
	lockTTL    = 2 * time.Second
	pollEvery  = 50 * time.Millisecond
	waitBudget = time.Second
)

// ErrBusy is what a visitor gets after waiting a second for another
// instance's fill.
var ErrBusy = errors.New("shop: the price is being refreshed; try again")

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

// storeIfNotOlder stores "version:price" unless Redis holds a newer
// version (a newer price, or a newer write's tombstone). Versions are
// compared as numbers: as text, "9" sorts after "10".
var storeIfNotOlder = redis.NewScript(`
local cur = redis.call("GET", KEYS[1])
if cur then
	local v = tonumber(string.match(cur, "^(%d+):"))
	if v and v > tonumber(ARGV[1]) then
		return 0
	end
end
redis.call("SET", KEYS[1], ARGV[1] .. ":" .. ARGV[2], "PX", ARGV[3])
return 1`)

// tombstone replaces the price with "version:" unless Redis already holds
// this version or a newer one.
var tombstone = redis.NewScript(`
local cur = redis.call("GET", KEYS[1])
if cur then
	local v = tonumber(string.match(cur, "^(%d+):"))
	if v and v >= tonumber(ARGV[1]) then
		return 0
	end
end
redis.call("SET", KEYS[1], ARGV[1] .. ":", "PX", ARGV[2])
return 1`)

var release = redis.NewScript(`
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
			if r.Err != nil && a.began.Before(came) && s.clock.Now().Sub(came) < waitBudget {
				continue
			}
			if errors.Is(r.Err, ErrBusy) {
				// Whole milliseconds, 500 to 1499, one draw per visitor.
				return 0, &TryAgain{After: time.Duration(500+mathrand.IntN(1000)) * time.Millisecond}
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
	deadline := s.clock.Now().Add(waitBudget)
	for {
		if price, ok, err := s.cached(ctx, book); err != nil || ok {
			return price, err
		}
		token := rand.Text()
		won, err := s.rdb.SetNX(ctx, "lock:"+book, token, lockTTL).Result()
		if err != nil {
			return 0, fmt.Errorf("shop: locking %s: %w", book, err)
		}
		if won {
			price, stored, err := s.fill(ctx, book)
			if err != nil && ctx.Err() == nil && !isRedis(err) {
				s.backOff(ctx, book, token) // the database failed
			} else {
				s.unlock(ctx, book, token)
			}
			if err != nil || stored {
				return price, err
			}
			// A newer version got there first: read that one, within the
			// budget.
			if !s.clock.Now().Before(deadline) {
				return 0, ErrBusy
			}
			continue
		}
		if !s.clock.Now().Before(deadline) {
			return 0, ErrBusy
		}
		if err := s.clock.Sleep(ctx, pollEvery/2+mathrand.N(pollEvery)); err != nil {
			return 0, err
		}
	}
}

// unlock releases the lock on a context of its own: the visitor's may
// have ended, which is often why the fill failed, and the lock must go all
// the same. Past the lock's time to live there is nothing left to release.
func (s *Shop) unlock(ctx context.Context, book, token string) {
	ctx, cancel := clock.WithTimeout(context.WithoutCancel(ctx), s.clock, lockTTL)
	defer cancel()
	release.Run(ctx, s.rdb, []string{"lock:" + book}, token)
}

// isRedis reports whether a fill failed in Redis rather than in the
// database: the fill wraps Redis's errors with "shop:".
func isRedis(err error) bool { return strings.HasPrefix(err.Error(), "shop:") }

// backOff leaves the lock to expire in half a second instead of releasing
// it: a failing database is read by the fleet twice a second, not by
// every visitor.
func (s *Shop) backOff(ctx context.Context, book, token string) {
	ctx, cancel := clock.WithTimeout(context.WithoutCancel(ctx), s.clock, lockTTL)
	defer cancel()
	shorten.Run(ctx, s.rdb, []string{"lock:" + book}, token, 500)
}

var shorten = redis.NewScript(`
if redis.call("GET", KEYS[1]) ~= ARGV[1] then return 0 end
return redis.call("PEXPIRE", KEYS[1], ARGV[2])`)

func (s *Shop) fill(ctx context.Context, book string) (int, bool, error) {
	rctx, cancel := clock.WithTimeout(ctx, s.clock, 12*time.Second) // a read that long is stuck, not slow
	defer cancel()
	row, err := s.db.Row(rctx, book)
	if err != nil {
		return 0, false, err
	}
	n, err := storeIfNotOlder.Run(ctx, s.rdb, []string{"v:" + book}, row.Version, row.Price, priceTTL.Milliseconds()).Int()
	if err != nil {
		return 0, false, fmt.Errorf("shop: storing %s: %w", book, err)
	}
	return row.Price, n == 1, nil
}

// SetPrice commits, then leaves a tombstone of the new version in Redis.
func (s *Shop) SetPrice(ctx context.Context, book string, price int) error {
	row, err := s.db.SetPrice(ctx, book, price)
	if err != nil {
		return err
	}
	tctx, cancel := clock.WithTimeout(context.WithoutCancel(ctx), s.clock, time.Second) // the caller may be gone
	defer cancel()
	if err := tombstone.Run(tctx, s.rdb, []string{"v:" + book}, row.Version, priceTTL.Milliseconds()).Err(); err != nil {
		return fmt.Errorf("shop: invalidating %s: %w", book, err)
	}
	return nil
}

// cached returns the price in Redis; a tombstone is a miss.
func (s *Shop) cached(ctx context.Context, book string) (int, bool, error) {
	v, err := s.rdb.Get(ctx, "v:"+book).Result()
	if errors.Is(err, redis.Nil) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("shop: reading %s: %w", book, err)
	}
	_, p, _ := strings.Cut(v, ":")
	if p == "" {
		return 0, false, nil
	}
	price, err := strconv.Atoi(p)
	return price, err == nil, err
}

// Relay lays the tombstone of each unsent outbox row, with the version the
// row's write committed, until ctx ends. A tombstone never goes below a
// newer version, so a late one cannot hide a fresher fill.
func (s *Shop) Relay(ctx context.Context) error {
	for s.clock.Sleep(ctx, 100*time.Millisecond) == nil {
		rows, err := s.db.Pending(ctx)
		if err != nil {
			continue
		}
		for _, row := range rows {
			tctx, cancel := clock.WithTimeout(ctx, s.clock, time.Second)
			err := tombstone.Run(tctx, s.rdb, []string{"v:" + row.Book}, row.Version, priceTTL.Milliseconds()).Err()
			cancel()
			if err != nil {
				break
			}
			if s.db.MarkSent(ctx, row.ID) != nil {
				break
			}
		}
	}
	return nil
}
