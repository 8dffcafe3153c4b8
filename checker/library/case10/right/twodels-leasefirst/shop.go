// Package twodelsleasefirst is a known-right answer to case 10, written
// otherwise than the reference: the write path ends the lease and deletes
// the price in two commands, the lease first. A filler that fills between
// them finds its lease gone and reads again; a fill that lands before the
// first is taken out by the second. An instance's visitors of a book share
// one flight, whose answer they pass from hand to hand.
package twodelsleasefirst

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

	"stampede/shop/catalog"
	"stampede/shop/clock"
)

const (
	// priceTTL is the floor of correctness: a write whose delete never
	// reaches Redis (the instance died just after the commit) leaves the old
	// price for at most this long.
	priceTTL = 30 * time.Second
	// leaseTTL bounds how long a filler that died holds everyone else up.
	// It outlasts a healthy read (0.2 s) by far, so that a live filler
	// does not lose its lease to the clock.
	leaseTTL = 2 * time.Second
	// readLimit bounds a read that holds a lease: a query that hangs must
	// not hold the book for the fleet for ever.
	readLimit = 20 * time.Second
	// A visitor who finds the lease taken polls for the holder's fill about
	// every pollEvery, and gives up after waitBudget.
	pollEvery  = 50 * time.Millisecond
	waitBudget = time.Second
)

// ErrConflict is what a fill gets when its lease was ended while it read
// the database: a write committed meanwhile, or the lease expired and
// another filler took over. What it read may be old, so it is not stored;
// the filler reads again.
var ErrConflict = errors.New("shop: the lease was ended before the fill")

// ErrBusy is what a visitor gets after waiting past its budget for
// another filler: try again in a moment.
var ErrBusy = errors.New("shop: the price is being read by another instance; try again in a moment")

// TryAgain is a visitor's answer past its budget: come back in After.
type TryAgain struct{ After time.Duration }

func (e *TryAgain) Error() string             { return "shop: busy; try again in " + e.After.String() }
func (e *TryAgain) RetryAfter() time.Duration { return e.After }

// Shop is one instance of the shop.
type Shop struct {
	db    *catalog.DB
	rdb   *redis.Client
	clock clock.Clock

	mu      sync.Mutex
	flights map[string]*flight
}

// New returns an instance of the shop in a fleet that shares the database
// db and the Redis behind rdb. The instance waits and tells the time with
// clk.
func New(db *catalog.DB, rdb *redis.Client, clk clock.Clock) *Shop {
	return &Shop{db: db, rdb: rdb, clock: clk, flights: map[string]*flight{}}
}

// A flight is the instance's one lookup of a book, shared by the visitors
// who ask for it while it is on. Its answer is passed from hand to hand:
// the lookup puts it in a channel with room for one, and each visitor who
// takes it out puts it back for the next. The visitors are counted (under
// Shop.mu), and the last to leave ends the lookup.
type flight struct {
	began    time.Time
	answer   chan answer // holds the answer once the lookup is done
	visitors int
	cancel   context.CancelFunc
}

type answer struct {
	price int
	err   error
}

// Price returns a book's price in cents, from Redis or, under a lease,
// from the database, through the instance's flight for the book.
func (s *Shop) Price(ctx context.Context, book string) (int, error) {
	came := s.clock.Now()
	for {
		f := s.board(ctx, book)
		select {
		case a := <-f.answer:
			f.answer <- a // for the next visitor
			// A flight that began before this visitor came may end, out
			// of budget or with a failed read, before the visitor has
			// waited its own budget: wait on in the next one.
			if a.err != nil && f.began.Before(came) && s.clock.Now().Sub(came) < waitBudget {
				continue
			}
			if errors.Is(a.err, ErrBusy) {
				return 0, &TryAgain{After: time.Second + mathrand.N(2*time.Second)} // 1 to 3 s, per visitor
			}
			return a.price, a.err
		case <-ctx.Done():
			s.alight(book, f)
			return 0, ctx.Err()
		}
	}
}

// board counts the caller among the visitors of the book's flight,
// starting one if none is on.
func (s *Shop) board(ctx context.Context, book string) *flight {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := s.flights[book]
	if f == nil {
		fctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		f = &flight{began: s.clock.Now(), answer: make(chan answer, 1), cancel: cancel}
		s.flights[book] = f
		go func() {
			price, err := s.lookup(fctx, book)
			s.mu.Lock()
			s.drop(book, f)
			s.mu.Unlock()
			f.answer <- answer{price, err}
		}()
	}
	f.visitors++
	return f
}

// alight takes a visitor who left off its flight; the last one ends the
// lookup, and the next visitor starts afresh.
func (s *Shop) alight(book string, f *flight) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f.visitors--; f.visitors == 0 {
		s.drop(book, f)
	}
}

// drop ends flight f and takes it off the instance. The caller holds s.mu.
func (s *Shop) drop(book string, f *flight) {
	f.cancel()
	if s.flights[book] == f {
		delete(s.flights, book)
	}
}

// lookup is a flight's work: the price from Redis or, under a lease, from
// the database.
func (s *Shop) lookup(ctx context.Context, book string) (int, error) {
	deadline := s.clock.Now().Add(waitBudget)
	for {
		if price, ok, err := s.cached(ctx, book); err != nil || ok {
			return price, err
		}
		// The token tells this lease from every other, so that the fill
		// can tell whether the lease is still ours.
		token := rand.Text()
		won, err := s.rdb.SetNX(ctx, leaseKey(book), token, leaseTTL).Result()
		if err != nil {
			return 0, fmt.Errorf("shop: taking the lease on %s: %w", book, err)
		}
		if won {
			price, err := s.fill(ctx, book, token)
			if err == nil {
				return price, nil
			}
			if !errors.Is(err, ErrConflict) {
				// Nobody will fill under this lease. After a database
				// failure it stays a quarter second (the fleet's backoff);
				// otherwise it goes now.
				if errors.Is(err, errDatabase) {
					s.expireSoon(ctx, book, token)
				} else {
					s.letGo(ctx, book, token)
				}
				return 0, err
			}
			// A write came between: read again at once, but within the
			// same budget, or writes faster than reads would keep this
			// visitor reading for as long as they last.
			if !s.clock.Now().Before(deadline) {
				return 0, ErrBusy
			}
			continue
		}
		// Someone else reads the database: wait for its fill, or for its
		// lease to end, and look again.
		if !s.clock.Now().Before(deadline) {
			return 0, ErrBusy
		}
		// Jittered: flights that missed together do not poll together.
		if err := s.clock.Sleep(ctx, pollEvery/2+mathrand.N(pollEvery)); err != nil {
			return 0, err
		}
	}
}

// fill reads the row under the lease token and stores its price, unless
// the lease has been ended meanwhile.
func (s *Shop) fill(ctx context.Context, book, token string) (int, error) {
	// Second look: the previous holder may have filled the price between
	// our miss and our lease. Then nobody fills under this lease: let it go.
	price, ok, err := s.cached(ctx, book)
	if err != nil {
		return 0, err
	}
	if ok {
		s.letGo(ctx, book, token)
		return price, nil
	}
	readCtx, cancel := clock.WithTimeout(ctx, s.clock, readLimit)
	k := s.keepAlive(readCtx, book, token)
	row, err := s.db.Row(readCtx, book)
	cancel()
	k.wait()
	if err != nil {
		if ctx.Err() == nil {
			return 0, fmt.Errorf("%w: %w", errDatabase, err)
		}
		return 0, err
	}
	stored, err := fillIfLeased.Run(ctx, s.rdb, []string{priceKey(book), leaseKey(book)},
		token, row.Price, priceTTL.Milliseconds()).Int()
	if err != nil {
		return 0, fmt.Errorf("shop: storing %s in Redis: %w", book, err)
	}
	if stored == 0 {
		return 0, ErrConflict
	}
	return row.Price, nil
}

// fillIfLeased stores the price only if the lease still holds the caller's
// token, and ends the lease. The check and the store are one step: between
// a GET of the lease and a SET of the price, a write could commit and
// delete both, and the SET would put the old price back.
var fillIfLeased = redis.NewScript(`
if redis.call("GET", KEYS[2]) ~= ARGV[1] then
	return 0
end
redis.call("SET", KEYS[1], ARGV[2], "PX", ARGV[3])
redis.call("DEL", KEYS[2])
return 1`)

// errDatabase is a fill whose read of the row failed.
var errDatabase = errors.New("shop: the database failed")

// expireSoon leaves the caller's lease a quarter second to live.
func (s *Shop) expireSoon(ctx context.Context, book, token string) {
	ctx, cancel := clock.WithTimeout(context.WithoutCancel(ctx), s.clock, leaseTTL)
	defer cancel()
	_ = renew.Run(ctx, s.rdb, []string{leaseKey(book)}, token, 250).Err()
}

// keeper renews a lease while its filler reads.
type keeper struct{ done chan struct{} }

// keepAlive starts renewing the caller's lease every 600 ms, for as long
// as ctx lasts and the lease holds token.
func (s *Shop) keepAlive(ctx context.Context, book, token string) keeper {
	k := keeper{done: make(chan struct{})}
	go func() {
		defer close(k.done)
		for {
			if err := s.clock.Sleep(ctx, 600*time.Millisecond); err != nil {
				return
			}
			ok, err := renew.Run(ctx, s.rdb, []string{leaseKey(book)}, token, leaseTTL.Milliseconds()).Bool()
			if err == nil && !ok {
				return
			}
		}
	}()
	return k
}

// wait returns once the keeper has stopped (its context ended).
func (k keeper) wait() { <-k.done }

// renew gives the caller's lease its full time to live again, if it is
// still the caller's.
var renew = redis.NewScript(`
if redis.call("GET", KEYS[1]) == ARGV[1] then
	return redis.call("PEXPIRE", KEYS[1], ARGV[2])
end
return 0`)

// SetPrice changes a book's price: the transaction first, then two deletes.
func (s *Shop) SetPrice(ctx context.Context, book string, price int) error {
	if _, err := s.db.SetPrice(ctx, book, price); err != nil {
		return err
	}
	// After the commit, never before; a delete, never a set; and on a
	// context of our own, since the commit stands if the caller leaves.
	// The lease first: a fill after this is refused, and one before it is
	// taken out by the next delete.
	ctx, cancel := clock.WithTimeout(context.WithoutCancel(ctx), s.clock, leaseTTL)
	defer cancel()
	if err := s.rdb.Del(ctx, leaseKey(book)).Err(); err != nil {
		return fmt.Errorf("shop: ending the lease on %s after the commit: %w", book, err)
	}
	if err := s.rdb.Del(ctx, priceKey(book)).Err(); err != nil {
		return fmt.Errorf("shop: invalidating %s after the commit: %w", book, err)
	}
	return nil
}

// cached reads a book's price from Redis.
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

// The lease's key is the price's with a suffix, outside the braces: only
// the braces are hashed, so both keys share a Redis Cluster slot.
func priceKey(book string) string { return "{price:" + book + "}" }

func leaseKey(book string) string { return priceKey(book) + ":lease" }

// letGo ends the caller's lease after a fill that failed. It runs on a
// context of its own, since the visitor's may be why the fill failed (it
// left, or its deadline passed), and gives up once the lease would have
// expired anyway. The script leaves a lease that is no longer the
// caller's: its own may have expired and another filler taken over.
func (s *Shop) letGo(ctx context.Context, book, token string) {
	ctx, cancel := clock.WithTimeout(context.WithoutCancel(ctx), s.clock, leaseTTL)
	defer cancel()
	// Best effort: if Redis cannot be reached now, the lease's time to
	// live ends it.
	_ = deleteIfLeased.Run(ctx, s.rdb, []string{leaseKey(book)}, token).Err()
}

// deleteIfLeased deletes the lease only if it still holds the caller's
// token, in one step.
var deleteIfLeased = redis.NewScript(`
if redis.call("GET", KEYS[1]) == ARGV[1] then
	return redis.call("DEL", KEYS[1])
end
return 0`)

// Relay deletes, for every commit whose outbox row is still unsent, the
// lease and then the price, as SetPrice does, and marks the row sent once
// both deletes are through. It runs until ctx ends; a failure leaves the
// row for the next round.
func (s *Shop) Relay(ctx context.Context) error {
	const every = 100 * time.Millisecond
	for s.clock.Sleep(ctx, every) == nil {
		rows, err := s.db.Pending(ctx)
		if err != nil {
			continue
		}
		for _, row := range rows {
			if s.relayRow(ctx, row) != nil {
				break
			}
		}
	}
	return nil
}

// relayRow sends one outbox row's two deletes and marks it sent.
func (s *Shop) relayRow(ctx context.Context, row catalog.Invalidation) error {
	ctx, cancel := clock.WithTimeout(ctx, s.clock, leaseTTL)
	defer cancel()
	if err := s.rdb.Del(ctx, leaseKey(row.Book)).Err(); err != nil {
		return err
	}
	if err := s.rdb.Del(ctx, priceKey(row.Book)).Err(); err != nil {
		return err
	}
	return s.db.MarkSent(ctx, row.ID)
}
