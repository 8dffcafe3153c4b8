// Package luaops is a known-right answer to case 10, written otherwise than
// the reference: one Lua script per operation. The read script returns the
// price, or takes the lease for the caller in the same step, or says that
// someone else holds it; the fill script stores the price only under the
// caller's lease; the invalidate script deletes the price and the lease.
// Waiters back off from about 10 ms, doubling to about 80 ms, for about a
// second, and an instance's visitors of a book subscribe to one lookup.
package luaops

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

	"stampede/shop/catalog"
	"stampede/shop/clock"
)

// ErrConflict is a fill whose lease was ended: a write came between.
var ErrConflict = errors.New("shop: conflict: lease ended")

// errReadFailed is a fill whose database read failed with its visitor
// still there.
var errReadFailed = errors.New("shop: read failed")

// ErrBusy is a wait that ran out.
var ErrBusy = errors.New("shop: busy, try again")

// TryAgain is a visitor's answer past its budget: come back in After.
type TryAgain struct{ After time.Duration }

func (e *TryAgain) Error() string             { return "shop: busy; try again in " + e.After.String() }
func (e *TryAgain) RetryAfter() time.Duration { return e.After }

var (
	readOrLease = redis.NewScript(`
local v = redis.call("GET", KEYS[1])
if v then
	return "hit:" .. v
end
if redis.call("SET", KEYS[2], ARGV[1], "NX", "PX", ARGV[2]) then
	return "lease"
end
return "wait"`)

	fillUnderLease = redis.NewScript(`
if redis.call("GET", KEYS[2]) == ARGV[1] then
	redis.call("SET", KEYS[1], ARGV[2], "PX", ARGV[3])
	redis.call("DEL", KEYS[2])
	return "ok"
end
return "conflict"`)

	invalidate = redis.NewScript(`return redis.call("DEL", KEYS[1], KEYS[2])`)

	prolongIfMine = redis.NewScript(`
if redis.call("GET", KEYS[2]) == ARGV[1] then
	return redis.call("PEXPIRE", KEYS[2], ARGV[2])
end
return 0`)

	dropIfMine = redis.NewScript(`
if redis.call("GET", KEYS[2]) == ARGV[1] then
	return redis.call("DEL", KEYS[2])
end
return 0`)
)

// Shop is one instance of the shop.
type Shop struct {
	db    *catalog.DB
	rdb   *redis.Client
	clock clock.Clock
	ttl   time.Duration // of a price
	lease time.Duration // of a lease

	mu    sync.Mutex
	calls map[string]*lookupCall
}

// New returns an instance of the shop.
func New(db *catalog.DB, rdb *redis.Client, clk clock.Clock) *Shop {
	return &Shop{db: db, rdb: rdb, clock: clk, ttl: 20 * time.Second, lease: 5 * time.Second, calls: map[string]*lookupCall{}}
}

func (s *Shop) keys(book string) []string {
	return []string{"cache:{" + book + "}", "cache:{" + book + "}:lease"} // one hash slot
}

// Price returns a book's price in cents. An instance's visitors of a book
// subscribe to one lookup, each with a channel of its own, on which the
// lookup sends its answer.
func (s *Shop) Price(ctx context.Context, book string) (int, error) {
	came := s.clock.Now()
	for {
		call, answer := s.subscribe(ctx, book)
		select {
		case r := <-answer:
			// A lookup older than this visitor may fail, or run out of
			// its second, a moment after the visitor came: then the
			// visitor tries a lookup of its own, within its own second.
			if r.err != nil && call.began.Before(came) && s.clock.Now().Sub(came) < time.Second {
				continue
			}
			if r.err == ErrBusy {
				// 0.75 to 1.25 s, drawn per subscriber.
				return 0, &TryAgain{After: 750*time.Millisecond + mathrand.N(500*time.Millisecond)}
			}
			return r.price, r.err
		case <-ctx.Done():
			s.unsubscribe(book, call, answer)
			return 0, ctx.Err()
		}
	}
}

// A lookupCall is an instance's one lookup of a book, and the channels of
// the visitors waiting for it (guarded by Shop.mu).
type lookupCall struct {
	began  time.Time
	subs   map[chan result]bool
	cancel context.CancelFunc
}

type result struct {
	price int
	err   error
}

// subscribe adds a channel for the caller to the book's lookup, starting
// one if none is on. The lookup runs on a context of its own, since it
// works for every subscriber, and ends when the last one leaves.
func (s *Shop) subscribe(ctx context.Context, book string) (*lookupCall, chan result) {
	s.mu.Lock()
	defer s.mu.Unlock()
	call := s.calls[book]
	if call == nil {
		lctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		call = &lookupCall{began: s.clock.Now(), subs: map[chan result]bool{}, cancel: cancel}
		s.calls[book] = call
		go func() {
			price, err := s.lookup(lctx, book, call.began)
			s.mu.Lock()
			defer s.mu.Unlock()
			cancel()
			if s.calls[book] == call {
				delete(s.calls, book)
			}
			for ch := range call.subs {
				ch <- result{price, err} // buffered: never blocks
			}
		}()
	}
	ch := make(chan result, 1)
	call.subs[ch] = true
	return call, ch
}

// unsubscribe takes a visitor who left off its lookup; the last to leave
// ends it and takes it off the instance, so that the next visitor starts
// a lookup of its own.
func (s *Shop) unsubscribe(book string, call *lookupCall, ch chan result) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(call.subs, ch)
	if len(call.subs) > 0 {
		return
	}
	call.cancel()
	if s.calls[book] == call {
		delete(s.calls, book)
	}
}

// lookup asks Redis, and fills under a lease, for the visitors of a
// lookup that began at began, within a second of it.
func (s *Shop) lookup(ctx context.Context, book string, began time.Time) (int, error) {
	backoff := 10 * time.Millisecond
	for {
		token := rand.Text()
		got, err := readOrLease.Run(ctx, s.rdb, s.keys(book), token, s.lease.Milliseconds()).Text()
		if err != nil {
			return 0, fmt.Errorf("shop: reading %s: %w", book, err)
		}
		switch {
		case strings.HasPrefix(got, "hit:"):
			return strconv.Atoi(strings.TrimPrefix(got, "hit:"))
		case got == "lease":
			price, err := s.fill(ctx, book, token)
			switch {
			case errors.Is(err, errReadFailed):
				// Keep the lease 200 ms: the fleet's backoff from a
				// failing database.
				s.holdLeaseFor(ctx, book, token, 200*time.Millisecond)
			case err != nil && !errors.Is(err, ErrConflict):
				s.dropLease(ctx, book, token) // nobody will fill under it
			}
			if !errors.Is(err, ErrConflict) {
				return price, err
			}
			// Read again, but within the same second: writes faster than
			// reads would refuse every fill.
			if s.clock.Now().Sub(began) >= time.Second {
				return 0, ErrBusy
			}
			continue
		}
		if s.clock.Now().Sub(began) >= time.Second {
			return 0, ErrBusy
		}
		// Half to one and a half of the backoff: instances that missed
		// together do not ask together.
		if err := s.clock.Sleep(ctx, backoff/2+mathrand.N(backoff)); err != nil {
			return 0, err
		}
		backoff = min(2*backoff, 80*time.Millisecond)
	}
}

// holdLeaseFor shortens the caller's lease to d, after a failed read.
func (s *Shop) holdLeaseFor(ctx context.Context, book, token string, d time.Duration) {
	ctx, cancel := clock.WithTimeout(context.WithoutCancel(ctx), s.clock, s.lease)
	defer cancel()
	prolongIfMine.Run(ctx, s.rdb, s.keys(book), token, d.Milliseconds())
}

// dropLease ends the caller's lease after a failed fill, on a context of
// its own (the visitor may be gone) bounded by the lease's own life.
func (s *Shop) dropLease(ctx context.Context, book, token string) {
	ctx, cancel := clock.WithTimeout(context.WithoutCancel(ctx), s.clock, s.lease)
	defer cancel()
	dropIfMine.Run(ctx, s.rdb, s.keys(book), token)
}

// maxRead is the longest a fill waits for the database while it holds
// its lease: past it the query is stuck, and the lease goes.
const maxRead = 20 * time.Second

func (s *Shop) fill(ctx context.Context, book, token string) (int, error) {
	readCtx, cancel := clock.WithTimeout(ctx, s.clock, maxRead)
	held := s.holdLease(readCtx, book, token)
	row, err := s.db.Row(readCtx, book)
	cancel()
	<-held
	if err != nil {
		if ctx.Err() == nil {
			return 0, fmt.Errorf("%w: %w", errReadFailed, err)
		}
		return 0, err
	}
	res, err := fillUnderLease.Run(ctx, s.rdb, s.keys(book), token, row.Price, s.ttl.Milliseconds()).Text()
	if err != nil {
		return 0, fmt.Errorf("shop: filling %s: %w", book, err)
	}
	if res != "ok" {
		return 0, ErrConflict
	}
	return row.Price, nil
}

// holdLease prolongs the caller's lease every quarter of its life, while
// it is still the caller's, until ctx ends: a slow read keeps its lease. The
// channel is closed once it has stopped.
func (s *Shop) holdLease(ctx context.Context, book, token string) <-chan struct{} {
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		for s.clock.Sleep(ctx, s.lease/4) == nil {
			n, err := prolongIfMine.Run(ctx, s.rdb, s.keys(book), token, s.lease.Milliseconds()).Int()
			if err == nil && n == 0 {
				return // a write ended it: the fill will be refused
			}
		}
	}()
	return stopped
}

// SetPrice commits, then invalidates.
func (s *Shop) SetPrice(ctx context.Context, book string, price int) error {
	if _, err := s.db.SetPrice(ctx, book, price); err != nil {
		return err
	}
	// The invalidation belongs to the commit, not to the caller, who may
	// be gone by now.
	ictx, cancel := clock.WithTimeout(context.WithoutCancel(ctx), s.clock, s.lease)
	defer cancel()
	return invalidate.Run(ictx, s.rdb, s.keys(book)).Err()
}

// Relay is the outbox relay: every tenth of a second, until ctx ends, it
// runs the write's invalidation for each row still pending, and marks the
// row sent once Redis has run it.
func (s *Shop) Relay(ctx context.Context) error {
	for {
		if err := s.clock.Sleep(ctx, 100*time.Millisecond); err != nil {
			return nil
		}
		rows, err := s.db.Pending(ctx)
		if err != nil {
			continue
		}
		for _, row := range rows {
			ictx, cancel := clock.WithTimeout(ctx, s.clock, s.lease)
			if invalidate.Run(ictx, s.rdb, s.keys(row.Book)).Err() == nil {
				_ = s.db.MarkSent(ctx, row.ID)
			} // else left pending: the next tick sends it again
			cancel()
		}
	}
}
