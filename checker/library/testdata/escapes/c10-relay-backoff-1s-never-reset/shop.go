// Package case10: a student's fix (leases, flights, outbox relay).
package case10

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"stampede/shop/catalog"
	"stampede/shop/clock"
)

const (
	priceTTL      = 30 * time.Second
	leaseTTL      = 2 * time.Second
	renewEvery    = leaseTTL / 3
	pollBudget    = time.Second
	refusedBudget = 5 * time.Second
	visitorCap    = 9 * time.Second
	readDeadline  = 10 * time.Second
	failBackoff   = 250 * time.Millisecond
	cmdTimeout    = time.Second

	relayEvery   = 100 * time.Millisecond
	relayMaxWait = time.Second
)

type TryAgain struct {
	After time.Duration
}

func (e *TryAgain) Error() string {
	return fmt.Sprintf("the price is being filled; try again in %v", e.After)
}

func (e *TryAgain) RetryAfter() time.Duration { return e.After }

var errBudget = errors.New("shop: out of budget waiting for the fill")

type flight struct {
	start time.Time
	n     int
	done  chan struct{}
	price int
	err   error
	ctx   context.Context
	stop  context.CancelFunc
}

type Shop struct {
	db    *catalog.DB
	rdb   *redis.Client
	clock clock.Clock

	mu      sync.Mutex
	flights map[string]*flight
}

func New(db *catalog.DB, rdb *redis.Client, clk clock.Clock) *Shop {
	return &Shop{db: db, rdb: rdb, clock: clk, flights: map[string]*flight{}}
}

var (
	fillScript = redis.NewScript(`
if redis.call('GET', KEYS[2]) == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[2], 'EX', ARGV[3])
  redis.call('DEL', KEYS[2])
  return 1
end
return 0`)
	renewScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0`)
	releaseScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0`)
)

func (s *Shop) Price(ctx context.Context, book string) (int, error) {
	price, ok, err := s.cached(ctx, book)
	if err != nil || ok {
		return price, err
	}
	arrived := s.clock.Now()
	wctx, cancel := clock.WithTimeout(ctx, s.clock, visitorCap)
	defer cancel()
	for {
		f := s.join(book)
		select {
		case <-f.done:
			s.leave(book, f)
			if f.err == nil {
				return f.price, nil
			}
			if f.start.Before(arrived) && ctx.Err() == nil && wctx.Err() == nil {
				continue // a wait that began before me ended: wait on in my own
			}
			if errors.Is(f.err, errBudget) {
				return 0, tryAgain()
			}
			return 0, f.err
		case <-wctx.Done():
			s.leave(book, f)
			if ctx.Err() != nil {
				return 0, ctx.Err()
			}
			return 0, tryAgain()
		}
	}
}

func tryAgain() error {
	return &TryAgain{After: 500*time.Millisecond + time.Duration(mrand.Int64N(int64(time.Second)))}
}

func (s *Shop) join(book string) *flight {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f, ok := s.flights[book]; ok {
		f.n++
		return f
	}
	fctx, stop := context.WithCancel(context.Background())
	f := &flight{start: s.clock.Now(), n: 1, done: make(chan struct{}), ctx: fctx, stop: stop}
	s.flights[book] = f
	go s.fly(book, f)
	return f
}

func (s *Shop) leave(book string, f *flight) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f.n--
	if f.n == 0 {
		f.stop()
		if s.flights[book] == f {
			delete(s.flights, book)
		}
	}
}

func (s *Shop) fly(book string, f *flight) {
	price, err := s.fill(f.ctx, book, f.start)
	s.mu.Lock()
	f.price, f.err = price, err
	if s.flights[book] == f {
		delete(s.flights, book)
	}
	s.mu.Unlock()
	close(f.done)
}

func (s *Shop) fill(ctx context.Context, book string, start time.Time) (int, error) {
	for {
		price, ok, err := s.cached(ctx, book)
		if err != nil || ok {
			return price, err
		}
		token := newToken()
		got, err := s.rdb.SetNX(ctx, leaseKey(book), token, leaseTTL).Result()
		if err != nil {
			return 0, fmt.Errorf("shop: taking the lease of %s: %w", book, err)
		}
		if !got {
			if s.clock.Now().Sub(start) >= pollBudget {
				return 0, errBudget
			}
			if err := s.clock.Sleep(ctx, time.Duration(25+mrand.IntN(51))*time.Millisecond); err != nil {
				return 0, err
			}
			continue
		}
		price, stored, err := s.underLease(ctx, book, token)
		if err != nil || stored {
			return price, err
		}
		// refused: a write ended the lease
		if s.clock.Now().Sub(start) >= refusedBudget {
			return 0, errBudget
		}
	}
}

func (s *Shop) underLease(ctx context.Context, book, token string) (int, bool, error) {
	price, ok, err := s.cached(ctx, book)
	if err != nil {
		s.release(book, token, 0)
		return 0, false, err
	}
	if ok {
		s.release(book, token, 0)
		return price, true, nil
	}
	rctx, cancelRead := clock.WithTimeout(ctx, s.clock, readDeadline)
	defer cancelRead()
	kctx, stopKeep := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for s.clock.Sleep(kctx, renewEvery) == nil {
			renewScript.Run(kctx, s.rdb, []string{leaseKey(book)}, token, leaseTTL.Milliseconds())
		}
	}()
	type result struct {
		row catalog.Row
		err error
	}
	ch := make(chan result, 1)
	go func() {
		row, err := s.db.Row(rctx, book)
		ch <- result{row, err}
	}()
	var r result
	select {
	case r = <-ch:
	case <-rctx.Done():
		r.err = context.Cause(rctx)
	}
	stopKeep()
	wg.Wait()
	if r.err != nil {
		if ctx.Err() != nil {
			s.release(book, token, 0)
			return 0, false, ctx.Err()
		}
		s.release(book, token, failBackoff)
		return 0, false, r.err
	}
	n, err := fillScript.Run(ctx, s.rdb, []string{priceKey(book), leaseKey(book)}, token, r.row.Price, int(priceTTL/time.Second)).Int()
	if err != nil {
		s.release(book, token, 0)
		return 0, false, fmt.Errorf("shop: storing %s: %w", book, err)
	}
	if n == 1 {
		return r.row.Price, true, nil
	}
	return 0, false, nil
}

// release lets a lease go, at once or after a backoff.
func (s *Shop) release(book, token string, after time.Duration) {
	ctx, cancel := clock.WithTimeout(context.Background(), s.clock, cmdTimeout)
	defer cancel()
	if after > 0 {
		renewScript.Run(ctx, s.rdb, []string{leaseKey(book)}, token, after.Milliseconds())
		return
	}
	releaseScript.Run(ctx, s.rdb, []string{leaseKey(book)}, token)
}

func newToken() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func (s *Shop) SetPrice(ctx context.Context, book string, price int) error {
	_, err := s.db.SetPrice(ctx, book, price)
	dctx, cancel := clock.WithTimeout(context.WithoutCancel(ctx), s.clock, cmdTimeout)
	defer cancel()
	s.invalidate(dctx, book) // the relay sends it again if this fails
	return err
}

func (s *Shop) invalidate(ctx context.Context, book string) error {
	return s.rdb.Del(ctx, priceKey(book), leaseKey(book)).Err()
}

// Relay: backoff doubles on failure, capped, but never set back.
func (s *Shop) Relay(ctx context.Context) error {
	wait := relayEvery
	for {
		if ctx.Err() != nil {
			return nil
		}
		if !s.relayPass(ctx) {
			wait = min(wait*2, relayMaxWait)
		}
		if s.clock.Sleep(ctx, wait) != nil {
			return nil
		}
	}
}
func (s *Shop) relayPass(ctx context.Context) bool {
	rows, err := s.db.Pending(ctx)
	if err != nil {
		return false
	}
	ok := true
	for _, r := range rows {
		dctx, cancel := clock.WithTimeout(ctx, s.clock, cmdTimeout/2)
		err := s.invalidate(dctx, r.Book)
		cancel()
		if err != nil {
			ok = false
			continue
		}
		if err := s.db.MarkSent(ctx, r.ID); err != nil {
			ok = false
		}
	}
	return ok
}

func (s *Shop) cached(ctx context.Context, book string) (int, bool, error) {
	v, err := s.rdb.Get(ctx, priceKey(book)).Result()
	if errors.Is(err, redis.Nil) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("shop: reading %s from Redis: %w", book, err)
	}
	price, err := strconv.Atoi(v)
	if err != nil {
		return 0, false, fmt.Errorf("shop: decoding the price of %s: %w", book, err)
	}
	return price, true, nil
}

func priceKey(book string) string { return "price:{" + book + "}" }
func leaseKey(book string) string { return "lease:{" + book + "}" }
