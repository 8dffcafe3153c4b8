// Package evalshareload is a known-right answer to case 10, written
// otherwise than the reference: the fill script is called by its hash
// (EVALSHA), computed once, and whenever Redis answers NOSCRIPT (it
// restarted, or its scripts were flushed) the instance loads the script
// again (SCRIPT LOAD) and retries, as go-redis's Script.Run does with EVAL.
package evalshareload

import (
	"context"
	"crypto/rand"
	"crypto/sha1"
	"encoding/hex"
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

const (
	// priceTTL is the floor of correctness: a write whose delete never
	// reaches Redis (the instance died just after the commit) leaves the old
	// price for at most this long.
	priceTTL = 30 * time.Second
	// leaseTTL bounds how long a filler that died holds everyone else up.
	// It outlasts a healthy read (0.2 s) by far, so that a live filler
	// does not lose its lease to the clock.
	leaseTTL = 2 * time.Second
	// maxRead bounds the read a lease is kept alive for.
	maxRead = 15 * time.Second
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
// who ask for it while it is on; it ends early only when the last of them
// has left.
type flight struct {
	began    time.Time
	done     chan struct{}
	price    int
	err      error
	visitors int // guarded by Shop.mu
	cancel   context.CancelFunc
}

// Price returns a book's price in cents, from Redis or, under a lease,
// from the database, through the instance's flight for the book.
func (s *Shop) Price(ctx context.Context, book string) (int, error) {
	came := s.clock.Now()
	for {
		price, began, err := s.fly(ctx, book)
		// A flight that began before this visitor came may end, out of
		// budget or with a failed read, before the visitor has waited
		// its own budget: wait on in the next one.
		if err != nil && ctx.Err() == nil && began.Before(came) && s.clock.Now().Sub(came) < waitBudget {
			continue
		}
		if errors.Is(err, ErrBusy) {
			// Refused with the flight's other visitors: a delay of its own.
			return 0, &TryAgain{After: 500*time.Millisecond + mathrand.N(time.Second)}
		}
		return price, err
	}
}

// fly joins the book's flight, starting one if none is on, and returns
// its answer and when it began, or the visitor's context's error if it
// leaves first.
func (s *Shop) fly(ctx context.Context, book string) (int, time.Time, error) {
	s.mu.Lock()
	f := s.flights[book]
	if f == nil {
		fctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		f = &flight{began: s.clock.Now(), done: make(chan struct{}), cancel: cancel}
		s.flights[book] = f
		go func() {
			price, err := s.lookup(fctx, book)
			s.mu.Lock()
			f.price, f.err = price, err
			s.drop(book, f)
			s.mu.Unlock()
			close(f.done)
		}()
	}
	f.visitors++
	s.mu.Unlock()
	select {
	case <-f.done:
		return f.price, f.began, f.err
	case <-ctx.Done():
		s.mu.Lock()
		if f.visitors--; f.visitors == 0 {
			s.drop(book, f) // the next visitor starts afresh
		}
		s.mu.Unlock()
		return 0, f.began, ctx.Err()
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
			var down dbDown
			if errors.As(err, &down) {
				// The database failed: the lease lives 300 ms more, the
				// fleet's backoff, and then the next visitor tries.
				s.backOff(ctx, book, token)
				return 0, err
			}
			if !errors.Is(err, ErrConflict) {
				// The visitor left or Redis failed: nobody will fill
				// under this lease, so let the others read at once rather
				// than wait out its time to live.
				s.letGo(ctx, book, token)
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
	row, err := s.readLeased(ctx, book, token)
	if err != nil {
		if ctx.Err() == nil {
			return 0, dbDown{err}
		}
		return 0, err
	}
	keys := []string{priceKey(book), leaseKey(book)}
	stored, err := s.rdb.EvalSha(ctx, fillSHA, keys, token, row.Price, priceTTL.Milliseconds()).Int()
	if err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT") {
		// Redis has lost its scripts (a restart, a SCRIPT FLUSH): load
		// the script again and retry.
		if err := s.rdb.ScriptLoad(ctx, fillSource).Err(); err != nil {
			return 0, fmt.Errorf("shop: loading the fill script: %w", err)
		}
		stored, err = s.rdb.EvalSha(ctx, fillSHA, keys, token, row.Price, priceTTL.Milliseconds()).Int()
	}
	if err != nil {
		return 0, fmt.Errorf("shop: storing %s in Redis: %w", book, err)
	}
	if stored == 0 {
		return 0, ErrConflict
	}
	return row.Price, nil
}

// fillSource stores the price only if the lease still holds the caller's
// token, and ends the lease. The check and the store are one step: between
// a GET of the lease and a SET of the price, a write could commit and
// delete both, and the SET would put the old price back.
// readLeased reads the row within maxRead and keeps the lease alive
// meanwhile (every half second), as long as the lease is the caller's.
func (s *Shop) readLeased(ctx context.Context, book, token string) (catalog.Row, error) {
	ctx, cancel := clock.WithTimeout(ctx, s.clock, maxRead)
	defer cancel()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for s.clock.Sleep(ctx, leaseTTL/4) == nil {
			if n, err := extend.Run(ctx, s.rdb, []string{leaseKey(book)}, token, leaseTTL.Milliseconds()).Int(); err == nil && n == 0 {
				return
			}
		}
	}()
	row, err := s.db.Row(ctx, book)
	cancel()
	wg.Wait()
	return row, err
}

// extend renews a lease that is still the caller's.
var extend = redis.NewScript(`
if redis.call("GET", KEYS[1]) ~= ARGV[1] then
	return 0
end
return redis.call("PEXPIRE", KEYS[1], ARGV[2])`)

const fillSource = `
if redis.call("GET", KEYS[2]) ~= ARGV[1] then
	return 0
end
redis.call("SET", KEYS[1], ARGV[2], "PX", ARGV[3])
redis.call("DEL", KEYS[2])
return 1`

// fillSHA is the fill script's hash, the name EVALSHA calls it by.
var fillSHA = func() string {
	sum := sha1.Sum([]byte(fillSource))
	return hex.EncodeToString(sum[:])
}()

// SetPrice changes a book's price: the transaction first, then the delete.
func (s *Shop) SetPrice(ctx context.Context, book string, price int) error {
	if _, err := s.db.SetPrice(ctx, book, price); err != nil {
		return err
	}
	// After the commit, never before: a read that misses before the
	// commit reads the old row. A delete, never a set: a set carries a
	// value, and a slower set of an older value can land after it. The
	// lease goes in the same command, so a filler that read before the
	// commit finds its lease gone and stores nothing. The visitor may
	// have left during the commit, which stands: delete on a context that
	// outlives it, for at most a lease's time.
	dctx, cancel := clock.WithTimeout(context.WithoutCancel(ctx), s.clock, leaseTTL)
	defer cancel()
	if err := s.rdb.Del(dctx, priceKey(book), leaseKey(book)).Err(); err != nil {
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

// One hash tag, the book, so that the two keys share a Redis Cluster slot.
func priceKey(book string) string { return "price:{" + book + "}" }

func leaseKey(book string) string { return "lease:{" + book + "}" }

// dbDown is a read of the row that failed with its visitor still there.
type dbDown struct{ err error }

func (d dbDown) Error() string { return "shop: the database failed: " + d.err.Error() }
func (d dbDown) Unwrap() error { return d.err }

// backOff gives the caller's lease 300 ms more to live, and no more.
func (s *Shop) backOff(ctx context.Context, book, token string) {
	ctx, cancel := clock.WithTimeout(context.WithoutCancel(ctx), s.clock, leaseTTL)
	defer cancel()
	_ = extend.Run(ctx, s.rdb, []string{leaseKey(book)}, token, 300).Err()
}

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

// Relay sends the outbox's deletes until ctx ends, for a writer that died
// between its commit and its own delete. A row is marked sent only once
// Redis has its delete; one that failed is tried again on the next look.
func (s *Shop) Relay(ctx context.Context) error {
	for s.clock.Sleep(ctx, 100*time.Millisecond) == nil {
		pending, err := s.db.Pending(ctx)
		if err != nil {
			continue
		}
		for _, inv := range pending {
			dctx, cancel := clock.WithTimeout(ctx, s.clock, leaseTTL)
			err := s.rdb.Del(dctx, priceKey(inv.Book), leaseKey(inv.Book)).Err()
			cancel()
			if err != nil {
				break // Redis is failing: the next look tries again
			}
			_ = s.db.MarkSent(ctx, inv.ID)
		}
	}
	return nil
}
