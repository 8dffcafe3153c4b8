// Package writerlease is a known-right answer to case 10, written otherwise
// than the reference: the write path takes the lease itself before its
// transaction (a plain SET, which ends any filler's lease), so that no
// visitor reads the row while the write is open, and after the commit
// deletes the price and its own lease in one command. Visitors who find
// the writer's lease wait for it as for a filler's. An instance's visitors
// of a book share one flight, waiting for it on a sync.Cond.
package writerlease

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
	// readWithin bounds a read under a lease kept alive.
	readWithin = 15 * time.Second
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
	landed  *sync.Cond // on mu: a flight landed, or a visitor's context ended
	flights map[string]*flight
}

// New returns an instance of the shop in a fleet that shares the database
// db and the Redis behind rdb. The instance waits and tells the time with
// clk.
func New(db *catalog.DB, rdb *redis.Client, clk clock.Clock) *Shop {
	s := &Shop{db: db, rdb: rdb, clock: clk, flights: map[string]*flight{}}
	s.landed = sync.NewCond(&s.mu)
	return s
}

// A flight is the instance's one lookup of a book, shared by the visitors
// who ask for it while it is on. Its visitors wait on the shop's one
// sync.Cond, woken when any flight lands or any visitor's context ends;
// the last visitor to leave ends the lookup. Every field is guarded by
// Shop.mu.
type flight struct {
	began    time.Time
	landed   bool
	price    int
	err      error
	visitors int
	cancel   context.CancelFunc
}

// Price returns a book's price in cents, from Redis or, under a lease,
// from the database, through the instance's flight for the book.
func (s *Shop) Price(ctx context.Context, book string) (int, error) {
	came := s.clock.Now()
	for {
		price, began, err := s.await(ctx, book)
		// A flight that began before this visitor came may end, out of
		// budget or with a failed read, before the visitor has waited
		// its own budget: wait on in the next one.
		if err != nil && ctx.Err() == nil && began.Before(came) && s.clock.Now().Sub(came) < waitBudget {
			continue
		}
		if errors.Is(err, ErrBusy) {
			return 0, &TryAgain{After: time.Second/2 + mathrand.N(time.Second)} // each visitor its own moment
		}
		return price, err
	}
}

// await waits for the book's flight, starting one if none is on, and
// returns its answer and when it began, or the visitor's context's error
// if it leaves first.
func (s *Shop) await(ctx context.Context, book string) (int, time.Time, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := s.flights[book]
	if f == nil {
		fctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		f = &flight{began: s.clock.Now(), cancel: cancel}
		s.flights[book] = f
		go func() {
			price, err := s.lookup(fctx, book)
			s.mu.Lock()
			defer s.mu.Unlock()
			f.price, f.err, f.landed = price, err, true
			s.drop(book, f)
			s.landed.Broadcast()
		}()
	}
	f.visitors++
	// A Cond cannot wait on a channel: wake the waiters when this
	// visitor's context ends, and let each look at its own.
	stop := context.AfterFunc(ctx, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.landed.Broadcast()
	})
	defer stop()
	for !f.landed && ctx.Err() == nil {
		s.landed.Wait()
	}
	if f.landed {
		return f.price, f.began, f.err
	}
	if f.visitors--; f.visitors == 0 {
		s.drop(book, f) // the next visitor starts afresh
	}
	return 0, f.began, ctx.Err()
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
				// Nobody will fill under this lease: let it go, at once or,
				// when the database failed, in 400 ms, so that a failing
				// database is not read by every visitor.
				var after time.Duration
				if errors.Is(err, errNoRow) {
					after = 400 * time.Millisecond
				}
				s.letGo(ctx, book, token, after)
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
		s.letGo(ctx, book, token, 0)
		return price, nil
	}
	row, err := s.readKeepingLease(ctx, book, token)
	if err != nil {
		if ctx.Err() == nil {
			return 0, fmt.Errorf("%w (%s): %w", errNoRow, book, err)
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

// readKeepingLease reads the row, renewing the lease every third of its
// life while it is still ours: a writer's SET ends it, and then the fill
// will be refused anyway. The read is bounded, so a hung query lets go.
func (s *Shop) readKeepingLease(ctx context.Context, book, token string) (catalog.Row, error) {
	ctx, cancel := clock.WithTimeout(ctx, s.clock, readWithin)
	defer cancel()
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		for s.clock.Sleep(ctx, leaseTTL/3) == nil {
			if n, err := renewLease.Run(ctx, s.rdb, []string{leaseKey(book)}, token, leaseTTL.Milliseconds()).Int(); err == nil && n == 0 {
				return
			}
		}
	}()
	row, err := s.db.Row(ctx, book)
	cancel()
	<-stopped
	return row, err
}

var renewLease = redis.NewScript(`
if redis.call("GET", KEYS[1]) ~= ARGV[1] then return 0 end
return redis.call("PEXPIRE", KEYS[1], ARGV[2])`)

// SetPrice changes a book's price: the write's lease, the transaction, then the delete.
func (s *Shop) SetPrice(ctx context.Context, book string, price int) error {
	// The write's own lease: any filler's fill is refused from now on, and
	// nobody takes a lease (and reads the row) until the delete below.
	if err := s.rdb.Set(ctx, leaseKey(book), "write:"+rand.Text(), leaseTTL).Err(); err != nil {
		return fmt.Errorf("shop: taking the lease on %s for a write: %w", book, err)
	}
	if _, err := s.db.SetPrice(ctx, book, price); err != nil {
		return err
	}
	// After the commit, never before: a read that misses before the
	// commit reads the old row. A delete, never a set: a set carries a
	// value, and a slower set of an older value can land after it. The
	// lease goes in the same command, so a filler that read before the
	// commit finds its lease gone and stores nothing. It must be sent
	// even if our caller gave up during the commit.
	ctx, cancel := clock.WithTimeout(context.WithoutCancel(ctx), s.clock, leaseTTL)
	defer cancel()
	if err := s.rdb.Del(ctx, priceKey(book), leaseKey(book)).Err(); err != nil {
		// The price is committed, and so is its outbox row: the relay
		// sends this delete again.
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

// The book in braces: a hash tag, so that a script naming both keys runs
// on Redis Cluster.
func priceKey(book string) string { return "price:{" + book + "}" }

func leaseKey(book string) string { return "lease:price:{" + book + "}" }

// errNoRow is a fill whose read of the row failed, its visitor still
// there: the database is down or stuck.
var errNoRow = errors.New("shop: the database did not give the row")

// letGo ends the caller's lease after a fill that failed, now, or after
// the given time when it is not zero. It runs on a context of its own,
// since the visitor's may be why the fill failed (it left, or its
// deadline passed), and gives up once the lease would have expired
// anyway. The scripts leave a lease that is no longer the caller's: its
// own may have expired and another filler taken over.
func (s *Shop) letGo(ctx context.Context, book, token string, after time.Duration) {
	ctx, cancel := clock.WithTimeout(context.WithoutCancel(ctx), s.clock, leaseTTL)
	defer cancel()
	// Best effort: if Redis cannot be reached now, the lease's time to
	// live ends it.
	if after > 0 {
		_ = renewLease.Run(ctx, s.rdb, []string{leaseKey(book)}, token, after.Milliseconds()).Err()
		return
	}
	_ = deleteIfLeased.Run(ctx, s.rdb, []string{leaseKey(book)}, token).Err()
}

// deleteIfLeased deletes the lease only if it still holds the caller's
// token, in one step.
var deleteIfLeased = redis.NewScript(`
if redis.call("GET", KEYS[1]) == ARGV[1] then
	return redis.call("DEL", KEYS[1])
end
return 0`)

// Relay sends the outbox's deletes until ctx ends, so that a writer that
// dies after its commit is still invalidated; while Redis fails it looks
// less and less often, up to a second apart.
func (s *Shop) Relay(ctx context.Context) error {
	wait := 100 * time.Millisecond
	for s.clock.Sleep(ctx, wait) == nil {
		if err := s.relay(ctx); err != nil {
			wait = min(2*wait, time.Second)
			continue
		}
		wait = 100 * time.Millisecond
	}
	return nil
}

// relay tries every pending row once, a failed one not stopping the
// others, and reports what failed.
func (s *Shop) relay(ctx context.Context) error {
	ctx, cancel := clock.WithTimeout(ctx, s.clock, leaseTTL)
	defer cancel()
	rows, err := s.db.Pending(ctx)
	if err != nil {
		return err
	}
	var failed []error
	for _, row := range rows {
		err := s.rdb.Del(ctx, priceKey(row.Book), leaseKey(row.Book)).Err()
		if err == nil {
			err = s.db.MarkSent(ctx, row.ID) // only once Redis has the delete
		}
		failed = append(failed, err)
	}
	return errors.Join(failed...)
}
