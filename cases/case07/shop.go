// Package case07 is case 7 of the stampede lab: the key that must never
// miss.
//
// Read docs/07-xfetch.md first. Then:
//
//	go run ./shop run 7     five minutes of traffic on the bestseller list
//	go run ./shop check 7   grade your fix
//
// The bestseller list is read a hundred times a second. This shop already
// has single-flight: when the list expires, one reader queries the database
// and the rest wait for it. But they all wait, every time it expires. Make
// the list never expire under its readers: recompute it a little before it
// expires, with XFetch. Each read recomputes early when
//
//	now - delta*beta*ln(u) >= expiry
//
// where delta is how long the last recompute took, measured on the clock,
// and u is uniform in (0, 1]. The reader that draws the recompute is still
// served the list it found, and only one recompute runs at a time.
//
// Keep New's signature and Top's; the checker calls them with:
//
//   - clk, the shop's clock. Tell the time and measure with it, never with
//     the time package: the checker plays minutes of traffic on a virtual
//     clock, and db.Top sleeps on it.
//   - random, which returns a number in [0, 1) as rand.Float64 does, and is
//     safe for concurrent use. It is seeded, so every run draws the same
//     numbers. In `run 7` it returns exactly 0 about once in a hundred
//     draws, far more often than rand.Float64; the checks draw no 0 by
//     chance, and give one read a 0 on purpose, far from expiry, where no
//     right rule fires: u = 1 - random() and u < exp(-g/(delta*beta)) pass
//     there, ln(random()) does not.
//   - ttl, how long a value lives once stored.
//   - beta, XFetch's beta: 1 is the paper's choice, and larger recomputes
//     earlier.
package case07

import (
	"context"
	"sync"
	"time"

	"stampede/shop/catalog"
	"stampede/shop/clock"
)

// Shop serves the shop's shelves from a cache in front of the catalog.
type Shop struct {
	db     *catalog.DB
	clock  clock.Clock
	random func() float64
	ttl    time.Duration
	beta   float64

	mu    sync.RWMutex           // guards cache and locks
	cache map[string]entry       // shelf -> its books and when they expire
	locks map[string]*sync.Mutex // shelf -> the lock its one fetcher holds
}

// entry is a cached list and when it stops being served.
type entry struct {
	books  []string
	expiry time.Time
}

// New returns a shop with an empty cache in front of db.
func New(db *catalog.DB, clk clock.Clock, random func() float64, ttl time.Duration, beta float64) *Shop {
	return &Shop{
		db:     db,
		clock:  clk,
		random: random,
		ttl:    ttl,
		beta:   beta,
		cache:  make(map[string]entry),
		locks:  make(map[string]*sync.Mutex),
	}
}

// Top returns a shelf's books. A list is served until it expires; then one
// reader queries the database and the others wait for its answer.
func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	if books, ok := s.fresh(shelf); ok {
		return books, nil
	}

	lock := s.lockFor(shelf)
	lock.Lock()
	defer lock.Unlock()
	if books, ok := s.fresh(shelf); ok {
		return books, nil
	}

	books, err := s.db.Top(ctx, shelf)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.cache[shelf] = entry{books: books, expiry: s.clock.Now().Add(s.ttl)}
	s.mu.Unlock()
	return books, nil
}

// fresh returns the shelf's cached books if they have not expired.
func (s *Shop) fresh(shelf string) ([]string, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	e, ok := s.cache[shelf]
	if !ok || !s.clock.Now().Before(e.expiry) {
		return nil, false
	}
	return e.books, true
}

// lockFor returns the shelf's lock, making it on first use.
func (s *Shop) lockFor(shelf string) *sync.Mutex {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.locks[shelf]
	if !ok {
		l = new(sync.Mutex)
		s.locks[shelf] = l
	}
	return l
}
