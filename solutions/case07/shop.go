// Package case07 is the reference solution of case 7, the key that must
// never miss: XFetch early refresh on top of single-flight. The chapter is
// docs/07-xfetch.md.
package case07

import (
	"context"
	"fmt"
	"math"
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

	mu      sync.RWMutex
	cache   map[string]entry   // shelf -> its books, guarded by mu
	flights map[string]*flight // shelf -> its recompute in progress, guarded by mu
}

// entry is a cached list, how long the query that made it took, and when
// it stops being served.
type entry struct {
	books  []string
	delta  time.Duration
	expiry time.Time
}

// flight is one recompute of a shelf. done is closed when it has ended;
// books and err are set before that.
type flight struct {
	done  chan struct{}
	books []string
	err   error
}

// New returns a shop with an empty cache in front of db.
func New(db *catalog.DB, clk clock.Clock, random func() float64, ttl time.Duration, beta float64) *Shop {
	return &Shop{
		db:      db,
		clock:   clk,
		random:  random,
		ttl:     ttl,
		beta:    beta,
		cache:   make(map[string]entry),
		flights: make(map[string]*flight),
	}
}

// Top returns a shelf's books. While the list is fresh every reader gets it
// at once, and now and then one of them, more likely the nearer the list is
// to expiring, starts a recompute in the background. Only a reader who
// finds no fresh list waits, for the one recompute in flight. Every reader
// shares the one cached slice, as singleflight shares its value: callers
// must treat it as read-only, which keeps a hit free of copying.
func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	now := s.clock.Now()
	// A hit shares the read lock with every other hit: this is the path
	// that runs thousands of times a second, so it must not queue them.
	s.mu.RLock()
	e, ok := s.cache[shelf]
	// The flights table matters only where a draw could fire.
	busy := ok && s.mayFire(now, e) && s.flights[shelf] != nil
	s.mu.RUnlock()
	if ok && now.Before(e.expiry) {
		// A lucky draw while a recompute is already in flight changes
		// nothing: one recompute at a time is enough. Only the reader
		// whose draw says "now" takes the write lock, and looks again
		// under it: another reader may have started the recompute since,
		// or one may have landed and stored a newer list.
		if !busy && s.early(now, e) {
			s.mu.Lock()
			if cur := s.cache[shelf]; s.flights[shelf] == nil && cur.expiry.Equal(e.expiry) {
				s.launch(ctx, shelf)
			}
			s.mu.Unlock()
		}
		return e.books, nil
	}

	s.mu.Lock()
	// Second look: the list may have been stored since the read lock.
	if e, ok := s.cache[shelf]; ok && now.Before(e.expiry) {
		s.mu.Unlock()
		return e.books, nil
	}
	f := s.flights[shelf]
	if f == nil {
		f = s.launch(ctx, shelf)
	}
	s.mu.Unlock()

	select {
	case <-f.done:
		return f.books, f.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// early reports whether this read should recompute e now: XFetch's rule,
// now - delta*beta*ln(u) >= expiry. -ln(u) is exponentially distributed,
// so the chance rises smoothly as expiry nears, and the head start scales
// with delta: a slow query starts its recompute earlier.
func (s *Shop) early(now time.Time, e entry) bool {
	if !s.mayFire(now, e) {
		return false
	}
	u := 1 - s.random() // in (0, 1]: ln(0) would be minus infinity
	gap := time.Duration(-float64(e.delta) * s.beta * math.Log(u))
	return !now.Add(gap).Before(e.expiry)
}

// mayFire reports whether a draw could make this read recompute e. Far
// from expiry none can: u is at least 2^-53 (the float64 just below 1 is
// 1 - 2^-53), so -ln(u) is at most 53 ln 2, about 36.7. While more than
// that many delta*beta are left, a read skips the draw, the logarithm and
// the flights table, and a hit costs about what a plain cached read does.
func (s *Shop) mayFire(now time.Time, e entry) bool {
	return float64(e.expiry.Sub(now)) <= float64(e.delta)*s.beta*53*math.Ln2
}

// launch starts the one recompute of shelf and returns its flight. The
// caller holds s.mu for writing.
func (s *Shop) launch(ctx context.Context, shelf string) *flight {
	f := &flight{done: make(chan struct{})}
	s.flights[shelf] = f
	// The recompute outlives the reader who started it, so it must not be
	// cancelled with the reader's context; it keeps the context's values.
	// It loses the deadline too: if the database hangs, the flight stays in
	// the table and blocks every later refresh. Production code adds
	// context.WithTimeout; the lab leaves it out, as chapter 6 explains.
	go s.recompute(context.WithoutCancel(ctx), shelf, f)
	return f
}

// recompute queries the database for shelf, measuring how long it takes,
// stores the answer, and ends the flight. It ends the flight however the
// query ends: a panic here, on a goroutine of our own, would stop the
// whole shop, and a flight left in the table would stop every refresh
// after it. (A runtime.Goexit is told from a return by returned, as in
// case 5.)
func (s *Shop) recompute(ctx context.Context, shelf string, f *flight) {
	began := s.clock.Now()
	returned := false
	defer func() {
		if r := recover(); r != nil {
			// Production code keeps the stack too (runtime/debug.Stack) or logs it.
			f.books, f.err = nil, fmt.Errorf("shop: recomputing %s panicked: %v", shelf, r)
		} else if !returned {
			f.books, f.err = nil, fmt.Errorf("shop: recomputing %s ended its goroutine (runtime.Goexit)", shelf)
		}
		now := s.clock.Now()
		s.mu.Lock()
		if f.err == nil {
			s.cache[shelf] = entry{books: f.books, delta: now.Sub(began), expiry: now.Add(s.ttl)}
		}
		delete(s.flights, shelf)
		s.mu.Unlock()
		close(f.done)
	}()
	f.books, f.err = s.db.Top(ctx, shelf)
	returned = true
}
