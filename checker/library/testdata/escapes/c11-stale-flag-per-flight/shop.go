// Package case11 is the reference solution of case 11, the near cache: a
// copy of each price in every instance's memory, in front of Redis, kept
// in step by pub/sub. A write publishes the book and its new version after
// its commit and its tombstone in Redis; every instance, the writer's too,
// drops a copy older than that version on the message and remembers the
// version as the book's floor. A fill stores its copy only if what it read
// is not below the floor, and only if the subscription has not started
// again since the fill began: a message that came while it read, or one
// lost while the subscription was down, must not be undone by it. A new
// subscription (the first, or one after a cut) forgets every copy, since
// what was published meanwhile never arrives; a copy's short life bounds
// what a message lost any other way can cost. The visitors of an instance
// who miss one book share one fetch. The chapter is docs/12-near-cache.md.
package case11

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"stampede/shop/catalog"
	"stampede/shop/clock"
)

const (
	// priceTTL is how long a price, or a write's tombstone, lives in Redis.
	priceTTL = 30 * time.Second
	// localTTL bounds how long a lost message can leave an old copy: 5 s,
	// within the contract's 10. The messages keep the copies right; this is
	// for the message pub/sub loses without a word.
	localTTL = 5 * time.Second
	// fetchTimeout bounds a shared fetch, which runs on after its visitors
	// leave (the next visitor may want it): a fetch with no deadline could
	// hold the book up for this instance for good.
	fetchTimeout = 10 * time.Second
)

// Shop is one instance of the shop. Every instance shares the database,
// the Redis behind its client and the channel.
type Shop struct {
	db      *catalog.DB
	rdb     *redis.Client
	clock   clock.Clock
	channel string

	mu      sync.Mutex
	near    map[string]copied  // the instance's copies, by book
	floor   map[string]int64   // the newest version a message announced, by book
	flights map[string]*flight // the fetches under way, by book
	// epoch counts the subscription's starts; 0 before the first, when
	// nothing is stored: a write published then would never be heard of.
	epoch uint64
}

// copied is an instance's copy of a price.
type copied struct {
	price   int
	version int64
	expires time.Time
}

// flight is one fetch of a book, shared by the visitors who missed it.
type flight struct {
	done    chan struct{}
	price   int
	version int64
	err     error
	// stale is set (under Shop.mu) when a new subscription begins while
	// the fetch is under way: what it read may be older than a write
	// whose message was lost, so it must not be stored.
	stale bool
}

// New returns an instance of the shop in a fleet that shares the database
// db, the Redis behind rdb and the pub/sub channel named channel. The
// instance waits and tells the time with clk.
func New(db *catalog.DB, rdb *redis.Client, clk clock.Clock, channel string) *Shop {
	return &Shop{db: db, rdb: rdb, clock: clk, channel: channel,
		near: map[string]copied{}, floor: map[string]int64{}, flights: map[string]*flight{}}
}

// Price returns a book's price in cents: from the instance's copy, else
// from Redis, else from the database.
func (s *Shop) Price(ctx context.Context, book string) (int, error) {
	s.mu.Lock()
	if c, ok := s.near[book]; ok && s.clock.Now().Before(c.expires) {
		s.mu.Unlock()
		return c.price, nil
	}
	f, ok := s.flights[book]
	if !ok {
		f = &flight{done: make(chan struct{})}
		s.flights[book] = f
		go s.fly(book, f)
	}
	s.mu.Unlock()
	select {
	case <-f.done:
		return f.price, f.err
	case <-ctx.Done():
		return 0, fmt.Errorf("shop: waiting for the price of %s: %w", book, context.Cause(ctx))
	}
}

// fly fetches a book for a flight, stores the copy if it may, and lands
// the flight.
func (s *Shop) fly(book string, f *flight) {
	ctx, cancel := clock.WithTimeout(context.Background(), s.clock, fetchTimeout)
	defer cancel()
	f.price, f.version, f.err = s.fetch(ctx, book)

	s.mu.Lock()
	defer s.mu.Unlock()
	if s.flights[book] == f {
		delete(s.flights, book)
	}
	close(f.done)
	// Store only what no message has made old since the fetch began: not
	// below the floor, and not across a new subscription (marked stale by
	// forgetAll; epoch 0: no subscription yet).
	if f.err == nil && s.epoch != 0 && !f.stale && f.version >= s.floor[book] {
		s.near[book] = copied{price: f.price, version: f.version, expires: s.clock.Now().Add(localTTL)}
	}
}

// SetPrice changes a book's price: it commits the row, puts the write's
// tombstone in Redis, then tells every instance. A visitor who leaves
// during the write does not stop its tombstone or its message: the commit
// stands either way.
func (s *Shop) SetPrice(ctx context.Context, book string, price int) error {
	row, err := s.db.SetPrice(ctx, book, price)
	if err != nil {
		return err
	}
	ctx, cancel := clock.WithTimeout(context.WithoutCancel(ctx), s.clock, fetchTimeout)
	defer cancel()
	tombErr := s.storeNewer(ctx, book, row.Version, "")
	// Publish even if the tombstone failed: the copies are dropped either
	// way, and each fill then meets Redis's old price only until its time
	// to live, as it would with no copies.
	if err := s.rdb.Publish(ctx, s.channel, message(book, row.Version)).Err(); err != nil {
		return errors.Join(tombErr, fmt.Errorf("shop: announcing %s's new price: %w", book, err))
	}
	return tombErr
}

// Listen keeps the instance's copy in step with the fleet's writes, until
// ctx ends.
func (s *Shop) Listen(ctx context.Context) error {
	sub := s.rdb.Subscribe(ctx, s.channel)
	defer sub.Close()
	// ChannelWithSubscriptions, not Channel: go-redis subscribes again by
	// itself after a lost connection, and only its *Subscription message
	// says so.
	msgs := sub.ChannelWithSubscriptions()
	for {
		select {
		case <-ctx.Done():
			return nil
		case m, ok := <-msgs:
			if !ok {
				return nil
			}
			switch m := m.(type) {
			case *redis.Subscription:
				if m.Kind == "subscribe" {
					s.forgetAll()
				}
			case *redis.Message:
				s.invalidate(m.Payload)
			}
		}
	}
}

// forgetAll drops every copy and starts a new epoch: the subscription has
// just begun, and what was published before it is unknown.
func (s *Shop) forgetAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.near)
	// The fetches under way began before this subscription: mark them, so
	// that their fills are not stored, and take them off the instance.
	for _, f := range s.flights {
		f.stale = true
	}
	clear(s.flights)
	s.epoch++
}

// invalidate handles a write's message: it raises the book's floor and
// drops a copy below it.
func (s *Shop) invalidate(payload string) {
	book, version, ok := parse(payload)
	if !ok {
		return // not a message of ours
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if version > s.floor[book] {
		s.floor[book] = version
	}
	if c, ok := s.near[book]; ok && c.version < version {
		delete(s.near, book)
	}
	// A fetch under way may have read the old price: a visitor who comes
	// now, after the write, must not share it. It lands for those already
	// waiting (they came before the message) and is not stored.
	delete(s.flights, book)
}

// message is a write's announcement: the row's new version, a space, and
// the book (whose name may hold spaces).
func message(book string, version int64) string { return strconv.FormatInt(version, 10) + " " + book }

// parse reads a message.
func parse(payload string) (book string, version int64, ok bool) {
	v, book, ok := strings.Cut(payload, " ")
	version, err := strconv.ParseInt(v, 10, 64)
	return book, version, ok && err == nil
}

// fetch reads a book's price and its row's version from Redis, and on a
// miss from the database, which it then offers to Redis.
func (s *Shop) fetch(ctx context.Context, book string) (int, int64, error) {
	price, version, ok, err := s.redisPrice(ctx, book)
	if err != nil || ok {
		return price, version, err
	}
	row, err := s.db.Row(ctx, book)
	if err != nil {
		return 0, 0, err
	}
	if err := s.storeNewer(ctx, book, row.Version, strconv.Itoa(row.Price)); err != nil {
		return 0, 0, err
	}
	return row.Price, row.Version, nil
}

// The Redis layer, as shipped. A book's key holds "<version>:<price>", or
// a write's tombstone "<version>:" with no price, which a read takes for a
// miss.

// redisPrice reads a book's price and version from Redis; ok is false on a
// miss or a tombstone.
func (s *Shop) redisPrice(ctx context.Context, book string) (price int, version int64, ok bool, err error) {
	v, err := s.rdb.Get(ctx, priceKey(book)).Result()
	if errors.Is(err, redis.Nil) {
		return 0, 0, false, nil
	}
	if err != nil {
		return 0, 0, false, fmt.Errorf("shop: reading %s from Redis: %w", book, err)
	}
	ver, p, _ := strings.Cut(v, ":")
	if p == "" {
		return 0, 0, false, nil // a tombstone
	}
	version, err1 := strconv.ParseInt(ver, 10, 64)
	price, err2 := strconv.Atoi(p)
	if err := errors.Join(err1, err2); err != nil {
		return 0, 0, false, fmt.Errorf("shop: decoding the price of %s (%q): %w", book, v, err)
	}
	return price, version, true, nil
}

// storeNewer stores a book's price (or, with price "", a write's tombstone)
// at a row's version, unless Redis holds a newer version, or this one with
// its price. The check and the SET are one step: a script.
func (s *Shop) storeNewer(ctx context.Context, book string, version int64, price string) error {
	err := storeScript.Run(ctx, s.rdb, []string{priceKey(book)}, version, price, priceTTL.Milliseconds()).Err()
	if err != nil && !errors.Is(err, redis.Nil) {
		return fmt.Errorf("shop: writing %s to Redis: %w", book, err)
	}
	return nil
}

// storeScript sets KEYS[1] to "ARGV[1]:ARGV[2]" for ARGV[3] ms unless it
// holds a newer version, or the same version with a price.
var storeScript = redis.NewScript(`
local held = redis.call('GET', KEYS[1])
if held then
  local version, price = string.match(held, '^(%d+):(.*)$')
  version = tonumber(version)
  local mine = tonumber(ARGV[1])
  if version and (version > mine or (version == mine and price ~= '')) then
    return 0
  end
end
redis.call('SET', KEYS[1], ARGV[1] .. ':' .. ARGV[2], 'PX', ARGV[3])
return 1
`)

func priceKey(book string) string { return "price:" + book }
