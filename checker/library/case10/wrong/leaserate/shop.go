// Package leaserate is a known-wrong answer to case 10, kept for compare:
// memcache's leases as Nishtala et al. (NSDI 2013) describe them, on the
// reference. At most one lease per key every 10 s, and a write that keeps
// the price it deletes for a while, served to the readers who cannot have
// a lease meanwhile. Under a hot key that is one read of the row per 10 s
// at most, whatever the writes do; but a reader after a write is served
// the old price for up to 10 s, and when the write comes in the middle of
// a fill, it ends that fill and no new lease can be had for the rest of
// those 10 s. Memcache's clients say whether they accept a stale value;
// this shop's visitors cannot, and the case asks for the new price once
// the write has returned.
package leaserate

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
	// reaches Redis, the direct one nor the relay's, leaves the old price
	// for at most this long.
	priceTTL = 30 * time.Second
	// leaseTTL bounds how long a filler that died holds everyone else up.
	// A live filler renews its lease every third of it while it reads
	// (keepAlive), so a read slower than leaseTTL is not refused.
	leaseTTL = 2 * time.Second
	// readTimeout bounds a fill's read of the row. The lease lives as long
	// as the read, so a read that hung would hold the book up for the
	// whole fleet; past readTimeout (twice the slowest read the shop
	// waits for, 5 s) the database is not slow but stuck, and the lease
	// goes to the next visitor.
	readTimeout = 10 * time.Second
	// failBackoff is how long a filler whose read failed keeps its lease:
	// while the database fails, the whole fleet reads it about four times
	// a second, not once per visitor, and the next try still comes soon.
	failBackoff = 250 * time.Millisecond
	// A flight that finds the lease taken polls for the holder's fill about
	// every pollEvery, and gives up after waitBudget, telling its visitors
	// to come back after retryAfter.
	pollEvery  = 50 * time.Millisecond
	waitBudget = time.Second
	retryAfter = time.Second
	// leaseEvery is memcache's lease rate limit: at most one lease per
	// key in that while (10 s, Facebook's setting in Nishtala et al.);
	// staleFor, how long a price a write took away is kept, to be served
	// stale meanwhile.
	leaseEvery = 10 * time.Second
	staleFor   = 10 * time.Second
	// The outbox relay looks for unsent invalidations every relayEvery,
	// and backs off up to maxRelayBackoff while its delete keeps failing.
	relayEvery      = 100 * time.Millisecond
	maxRelayBackoff = 2 * time.Second
)

// ErrConflict is what a fill gets when its lease was ended while it read
// the database: a write committed meanwhile, or the lease expired and
// another filler took over. What it read may be old, so it is not stored;
// the filler reads again.
var ErrConflict = errors.New("shop: the lease was ended before the fill")

// errRead marks a fill whose read of the row failed while its visitor
// was still there: the database is down, or stuck past readTimeout.
var errRead = errors.New("shop: reading the row")

// TryAgain is what a visitor gets past its budget: another instance was
// filling the price, or every fill of its own was refused by a write. The
// name and the method are those of cases 6, 8 and 9, so that the server's
// handler can turn any of them into a 503 with its Retry-After.
type TryAgain struct {
	After time.Duration
}

func (e *TryAgain) Error() string {
	return fmt.Sprintf("shop: the price is being filled; try again in %v", e.After)
}

// RetryAfter says when to try again.
func (e *TryAgain) RetryAfter() time.Duration { return e.After }

// comeBack is one visitor's "try again", with a delay drawn for it alone
// (0.5 to 1.5 s). The visitors of a flight share its refusal: told one
// delay, they would all come back at the same instant, the stampede again
// a second later.
func comeBack() *TryAgain { return &TryAgain{After: retryAfter/2 + mathrand.N(retryAfter)} }

// Shop is one instance of the shop.
type Shop struct {
	db    *catalog.DB
	rdb   *redis.Client
	clock clock.Clock

	mu      sync.Mutex
	flights map[string]*flight // the book's flight, while one is on
}

// A flight is an instance's one lookup of a book's price, shared by every
// visitor of the instance who asks for the book while it is on. Without
// it, each waiting visitor would poll Redis on its own: a hot key's expiry
// on a fleet of 100 instances serving 100 visitors each would send tens of
// thousands of commands to the one Redis shard that holds the key.
type flight struct {
	began time.Time     // on the shop's clock
	done  chan struct{} // closed once price and err are set
	price int
	err   error

	// Guarded by Shop.mu: the visitors still waiting, and the end of the
	// lookup's context, called when the last of them leaves.
	visitors int
	cancel   context.CancelFunc
}

// New returns an instance of the shop in a fleet that shares the database
// db and the Redis behind rdb. The instance waits and tells the time with
// clk.
func New(db *catalog.DB, rdb *redis.Client, clk clock.Clock) *Shop {
	return &Shop{db: db, rdb: rdb, clock: clk, flights: make(map[string]*flight)}
}

// Price returns a book's price in cents, from Redis or, on a miss,
// through the instance's flight for the book.
func (s *Shop) Price(ctx context.Context, book string) (int, error) {
	// A hit needs no flight. And a visitor who comes after a fill has
	// landed is served at once, not when a flight still asleep between
	// two polls wakes.
	if price, ok, err := s.cached(ctx, book); err != nil || ok {
		return price, err
	}
	came := s.clock.Now()
	for {
		f := s.join(ctx, book)
		select {
		case <-f.done:
		case <-ctx.Done():
			s.leave(book, f)
			return 0, ctx.Err()
		}
		// A flight that began before this visitor came may end a moment
		// after it came: out of its budget, or with a read that failed
		// or was given up. The visitor then waits on, in a flight of its
		// own, so that each waits its own budget and is failed only by
		// its own flight.
		if f.err != nil && f.began.Before(came) && s.clock.Now().Sub(came) < waitBudget {
			continue
		}
		var busy *TryAgain
		if errors.As(f.err, &busy) {
			return 0, comeBack()
		}
		return f.price, f.err
	}
}

// join counts the caller among the visitors of the book's flight, starting
// one if none is on.
func (s *Shop) join(ctx context.Context, book string) *flight {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := s.flights[book]
	if f == nil {
		// The flight works for every visitor who joins it, so it must not
		// end with its first visitor's context; it ends when its last
		// visitor leaves (see leave). Its waits have bounds of their own.
		fctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		f = &flight{began: s.clock.Now(), done: make(chan struct{}), cancel: cancel}
		s.flights[book] = f
		go s.fly(fctx, book, f)
	}
	f.visitors++
	return f
}

// fly runs the flight's lookup and hands its answer to the visitors.
func (s *Shop) fly(ctx context.Context, book string, f *flight) {
	price, err := s.lookup(ctx, book)
	s.mu.Lock()
	f.price, f.err = price, err
	f.cancel()
	s.land(book, f)
	s.mu.Unlock()
	close(f.done)
}

// leave takes a visitor who gave up off its flight. The last one to leave
// ends the lookup, so that a lease taken for nobody is let go at once
// rather than held through a read whose answer nobody waits for.
func (s *Shop) leave(book string, f *flight) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f.visitors--
	if f.visitors == 0 {
		f.cancel()
		s.land(book, f) // the next visitor starts a flight of its own
	}
}

// land takes the book's flight f off the instance, if it is still on, so
// that no visitor joins it any more. The caller holds s.mu.
func (s *Shop) land(book string, f *flight) {
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
		won, err := issueLease.Run(ctx, s.rdb, []string{leaseKey(book), issuedKey(book)},
			token, leaseTTL.Milliseconds(), leaseEvery.Milliseconds()).Bool()
		if err != nil {
			return 0, fmt.Errorf("shop: taking the lease on %s: %w", book, err)
		}
		if won {
			price, err := s.fill(ctx, book, token)
			if err == nil {
				return price, nil
			}
			if !errors.Is(err, ErrConflict) {
				// Nobody will fill under this lease. If the database
				// failed, keep the lease a moment as the fleet's backoff:
				// were every visitor to read a failing database, an
				// outage would become a stampede. Otherwise (the visitor
				// left, Redis failed) let the others read at once rather
				// than wait out its time to live.
				keep := time.Duration(0)
				if errors.Is(err, errRead) {
					keep = failBackoff
				}
				s.letGo(ctx, book, token, keep)
				return 0, err
			}
			// A write came between: read again at once, but within the
			// same budget, or writes faster than reads would keep this
			// visitor reading for as long as they last.
			if !s.clock.Now().Before(deadline) {
				return 0, comeBack()
			}
			continue
		}
		// No lease for us: another filler holds one, or one was handed
		// out less than leaseEvery ago. The price the last write took
		// away is served meanwhile, as memcache serves a deleted item to
		// the clients that accept a stale value.
		if price, ok, err := s.stale(ctx, book); err == nil && ok {
			return price, nil
		}
		// Someone else reads the database: wait for its fill, or for its
		// lease to end, and look again.
		if !s.clock.Now().Before(deadline) {
			return 0, comeBack()
		}
		// Jittered, so that the flights of instances that missed together
		// do not poll Redis together for as long as they wait.
		if err := s.clock.Sleep(ctx, pollEvery/2+mathrand.N(pollEvery)); err != nil {
			return 0, err
		}
	}
}

// fill reads the row under the lease token and stores its price, unless
// the lease has been ended meanwhile.
func (s *Shop) fill(ctx context.Context, book, token string) (int, error) {
	// Second look: the previous holder may have filled the price between
	// our miss and our lease. Then nobody will fill under this lease:
	// let it go, or once the price is evicted the fleet waits it out.
	price, ok, err := s.cached(ctx, book)
	if err != nil {
		return 0, err
	}
	if ok {
		s.letGo(ctx, book, token, 0)
		return price, nil
	}
	row, err := s.read(ctx, book, token)
	if err != nil {
		if ctx.Err() == nil {
			return 0, fmt.Errorf("%w %s: %w", errRead, book, err)
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

// read reads the book's row within readTimeout, keeping the lease alive
// meanwhile: its time to live is there for a filler that died, not for one
// whose database is slow.
func (s *Shop) read(ctx context.Context, book, token string) (catalog.Row, error) {
	ctx, cancel := clock.WithTimeout(ctx, s.clock, readTimeout)
	defer cancel()
	renewed := make(chan struct{})
	go func() {
		defer close(renewed)
		for s.clock.Sleep(ctx, leaseTTL/3) == nil {
			// Only while the lease is ours: once a write has ended it,
			// or it lapsed and another filler took it, our fill will be
			// refused anyway, and a renewal must not bring it back.
			n, err := renewIfLeased.Run(ctx, s.rdb, []string{leaseKey(book)}, token, leaseTTL.Milliseconds()).Int()
			if err == nil && n == 0 {
				return
			}
		}
	}()
	row, err := s.db.Row(ctx, book)
	cancel()
	<-renewed // no renewal may land after the fill
	return row, err
}

// renewIfLeased gives the lease a new time to live only if it still holds
// the caller's token, in one step.
var renewIfLeased = redis.NewScript(`
if redis.call("GET", KEYS[1]) == ARGV[1] then
	return redis.call("PEXPIRE", KEYS[1], ARGV[2])
end
return 0`)

// letGo ends the caller's lease after a fill that failed, at once or,
// when keep is set, keep from now. It runs on a context of its own, since
// the visitor's may be why the fill failed (it left, or its deadline
// passed), and gives up once the lease would have expired anyway. The
// scripts leave a lease that is no longer the caller's: its own may have
// expired and another filler taken over.
func (s *Shop) letGo(ctx context.Context, book, token string, keep time.Duration) {
	ctx, cancel := clock.WithTimeout(context.WithoutCancel(ctx), s.clock, leaseTTL)
	defer cancel()
	// Best effort: if Redis cannot be reached now, the lease's time to
	// live ends it.
	if keep > 0 {
		_ = renewIfLeased.Run(ctx, s.rdb, []string{leaseKey(book)}, token, keep.Milliseconds()).Err()
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

// SetPrice changes a book's price: the transaction first, then the delete.
func (s *Shop) SetPrice(ctx context.Context, book string, price int) error {
	if _, err := s.db.SetPrice(ctx, book, price); err != nil {
		return err
	}
	// After the commit, never before: a read that misses before the
	// commit reads the old row. A delete, never a set: a set carries a
	// value, and a slower set of an older value can land after it. The
	// lease goes in the same command, so a filler that read before the
	// commit finds its lease gone and stores nothing. The commit stands
	// even if the visitor has left meanwhile, so the delete goes on a
	// context of its own, bounded as letGo's is.
	ctx, cancel := clock.WithTimeout(context.WithoutCancel(ctx), s.clock, leaseTTL)
	defer cancel()
	if err := s.invalidate(ctx, book); err != nil {
		// The price is committed, and so is its outbox row: the relay
		// sends this delete again.
		return fmt.Errorf("shop: invalidating %s after the commit: %w", book, err)
	}
	return nil
}

// invalidate deletes a book's price and its lease, in one script, and
// keeps the price it deleted for staleFor as the stale value.
func (s *Shop) invalidate(ctx context.Context, book string) error {
	return keepStale.Run(ctx, s.rdb, []string{priceKey(book), leaseKey(book), staleKey(book)},
		staleFor.Milliseconds()).Err()
}

// keepStale moves the price to its stale key and ends the lease.
var keepStale = redis.NewScript(`
local v = redis.call("GET", KEYS[1])
if v then
	redis.call("SET", KEYS[3], v, "PX", ARGV[1])
end
return redis.call("DEL", KEYS[1], KEYS[2])`)

// issueLease hands out the book's lease, as memcache does, at most once
// per leaseEvery: the issued key remembers the last one.
var issueLease = redis.NewScript(`
if redis.call("EXISTS", KEYS[2]) == 1 then
	return 0
end
if redis.call("SET", KEYS[1], ARGV[1], "NX", "PX", ARGV[2]) then
	redis.call("SET", KEYS[2], "1", "PX", ARGV[3])
	return 1
end
return 0`)

// stale reads the price the last write took away, if it is still kept.
func (s *Shop) stale(ctx context.Context, book string) (int, bool, error) {
	v, err := s.rdb.Get(ctx, staleKey(book)).Int()
	if errors.Is(err, redis.Nil) {
		return 0, false, nil
	}
	return v, err == nil, err
}

func issuedKey(book string) string { return "issued:{" + book + "}" }

func staleKey(book string) string { return "stale:{" + book + "}" }

// Relay sends the outbox's deletes until ctx ends. SetPrice's transaction
// leaves a row in the outbox for each commit, so a write whose own delete
// never came (its instance died right after the commit, or Redis refused
// the delete) is still invalidated, within about relayEvery, by the relay
// of any instance. The direct delete is for speed, the relay's for the
// crash; a delete sent twice is still one delete.
func (s *Shop) Relay(ctx context.Context) error {
	wait := relayEvery
	for {
		if err := s.relay(ctx); err != nil && ctx.Err() == nil {
			// Redis or the database is failing: look again later, and
			// later still while it lasts, rather than hammer it from
			// every instance of the fleet.
			wait = min(2*wait, maxRelayBackoff)
		} else {
			wait = relayEvery
		}
		if s.clock.Sleep(ctx, wait) != nil {
			return nil // ctx ended: the server is shutting down
		}
	}
}

// relay sends the delete of every pending outbox row, and marks each sent
// only once Redis has it: a row marked first and then lost with its
// delete would leave the old price for its whole time to live.
func (s *Shop) relay(ctx context.Context) error {
	ctx, cancel := clock.WithTimeout(ctx, s.clock, leaseTTL)
	defer cancel()
	rows, err := s.db.Pending(ctx)
	if err != nil {
		return err
	}
	for _, row := range rows {
		if err := s.invalidate(ctx, row.Book); err != nil {
			return fmt.Errorf("shop: relaying the invalidation of %s: %w", row.Book, err)
		}
		if err := s.db.MarkSent(ctx, row.ID); err != nil {
			return err
		}
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

// A book's price and its lease share a hash tag, the part in braces, so
// that they lie in one hash slot: Redis Cluster, as most managed Redis
// runs, refuses a script or a DEL whose keys are in two (CROSSSLOT).
func priceKey(book string) string { return "price:{" + book + "}" }

func leaseKey(book string) string { return "lease:{" + book + "}" }
