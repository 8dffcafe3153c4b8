package compare

import (
	"context"
	"net"
	"sync"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"stampede/shop/catalog"
	"stampede/shop/clock"
	"stampede/shop/events"
)

// Shop is what every technique's code offers: a shelf's books.
type Shop interface {
	Top(ctx context.Context, shelf string) ([]string, error)
}

// Row is one technique in the table: its code, and how compare makes one
// server's shop from it. Adding a technique is one Row, made by one of the
// adapters below (or a new one, for a new shape of New).
type Row struct {
	Technique string // "per-process single-flight"
	Code      string // where the code lives: "solutions/case01"
	Case      int    // the lab's case, or 0 for compare's own code
	// Open makes server number server's shop in env.
	Open func(env *Env, server int) Shop
	// Warm lists when, relative to the expiry, every server reads once
	// before the window is played, so that each of its caches expires at
	// the expiry. These reads and their source reads are not counted. Nil
	// means one read a time to live and a rebuild before the expiry.
	Warm func(w Workload) []time.Duration
	// Forever is set for code that keeps a value for ever (case 1): compare
	// plays its expiry by starting every server afresh at that moment,
	// which is what the expiry of its only entry amounts to.
	Forever bool
	// Invalidate is what the writer does to the cache after it changes the
	// catalogue, as cache-aside does: delete the shared key. Nil when the
	// cache lives in each server's memory, which a writer cannot reach, or
	// when the code has a write path of its own, an Invalidate(ctx, shelf)
	// method (case 9), which the writer then calls on server 0's shop.
	Invalidate func(ctx context.Context, env *Env) error
	// Write, when set, is the writer's whole write, for code whose write
	// path commits the change itself (case 10's SetPrice: the commit, then
	// the delete that ends the leases). Compare then neither changes the
	// catalogue nor calls Invalidate.
	Write func(ctx context.Context, env *Env) error
	// Pin, when set, is called once the warm-up has landed, left before
	// the expiry, to make what the warm-up stored expire at the expiry: for
	// code that draws its time to live at random (case 8's jitter), whose
	// one key would otherwise expire at a moment of its own.
	Pin func(ctx context.Context, env *Env, left time.Duration) error
	// NoWrite, when set, says why the row's code cannot be given the write
	// (case 8's database has none): its stale columns are not measured.
	NoWrite string
	// Seed is what seed 002 says the row should show.
	Seed Seed
}

// Seed is seed 002's figure for a row, and why compare's may differ.
type Seed struct {
	// Reads is the source reads per expiry the seed gives, for a workload;
	// nil when the worked example gives no count for the technique.
	Reads func(w Workload) int
	// NoMiss is set when the seed says no reader waits (XFetch).
	NoMiss bool
	Says   string // the seed's claim, in a few words
	// Why explains a difference the row is known to show, or is empty.
	Why string
	// Table is the seed's comparison table's row, for a technique the
	// worked example gives no count for: the table then says what it
	// stops, and compare prints that beside what the row played.
	Table *Claim
	// None says why the seed has nothing to hold the row to: no count,
	// and no row of its table.
	None string
}

// Claim is a row of seed 002's comparison table, in its own words.
type Claim struct {
	Stampede string // "Stops stampede": "Yes", "No", "Per process only", ...
	StaleSet string // "Stops stale set": "Yes", "No", "Reduces the window"
}

// Env is the world one row plays in: the fleet's database, the shops'
// clock, and an embedded Redis that every server can reach.
type Env struct {
	Clock  *clock.Fake
	DB     *catalog.DB
	Events *events.DB // the box office's database (case 8), on the same clock
	TTL    time.Duration
	Beta   float64 // XFetch's beta

	mu      sync.Mutex
	mr      *miniredis.Miniredis
	clients []*redis.Client
	seed    uint64
	stops   []context.CancelFunc // what Go started, ended by close
}

// Go runs fn on a goroutine of its own until the row ends: a server's
// loop that lives as long as the server (case 11's Listen). fn's ctx ends
// when the row does, before its Redis closes.
func (e *Env) Go(fn func(ctx context.Context)) {
	ctx, stop := context.WithCancel(context.Background())
	e.mu.Lock()
	e.stops = append(e.stops, stop)
	e.mu.Unlock()
	go fn(ctx)
}

// Redis returns a new client of the row's embedded Redis, reached over an
// in-memory connection: no port, no network round trip, and a server that
// parks on a channel when idle, so the process can come to rest.
func (e *Env) Redis() *redis.Client {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.mr == nil {
		e.mr = miniredis.NewMiniRedis()
	}
	mr := e.mr
	c := redis.NewClient(&redis.Options{
		Dialer:                   func(context.Context, string, string) (net.Conn, error) { return mr.Dial() },
		DisableIdentity:          true,
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
	})
	e.clients = append(e.clients, c)
	return c
}

// pass lets d pass in Redis too, so that keys expire with the shops' clock.
func (e *Env) pass(d time.Duration) {
	e.mu.Lock()
	mr := e.mr
	e.mu.Unlock()
	if mr != nil && d > 0 {
		mr.FastForward(d)
	}
}

// Random returns a seeded random source for one server, the same every
// run, safe for concurrent use.
func (e *Env) Random(server int) func() float64 {
	var mu sync.Mutex
	x := e.seed + uint64(server)*0x9e3779b97f4a7c15 + 1
	return func() float64 {
		mu.Lock()
		defer mu.Unlock()
		// splitmix64: small, and good enough for XFetch's draws.
		x += 0x9e3779b97f4a7c15
		z := x
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
		z = (z ^ (z >> 27)) * 0x94d049bb133111eb
		z ^= z >> 31
		return float64(z>>11) / (1 << 53)
	}
}

// close ends the row's Redis.
func (e *Env) close() {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, stop := range e.stops {
		stop()
	}
	for _, c := range e.clients {
		_ = c.Close()
	}
	if e.mr != nil {
		e.mr.Close()
	}
}

// The adapters: one per shape of New. A case whose New has one of these
// shapes needs only a Row; a new shape needs a new adapter here.

// SingleFlight is a row for a case-1-shaped shop, New(db), one per server.
// Its cache keeps a value for ever, so the row is Forever.
func SingleFlight[S Shop](technique, code string, n int, newShop func(*catalog.DB) S) Row {
	return Row{
		Technique: technique, Code: code, Case: n, Forever: true,
		Open: func(env *Env, _ int) Shop { return newShop(env.DB) },
		Warm: func(w Workload) []time.Duration { return []time.Duration{-w.Before - w.Rebuild} },
		Seed: Seed{
			Reads: func(w Workload) int { return w.Servers },
			Says:  "one load per server",
		},
	}
}

// Case 6's code keeps the shelf in Redis for shelfTTL and each instance's
// copy in memory for localTTL (solutions/case06: constants, not
// arguments). The warm-up fills Redis so that it expires at the expiry, and
// each instance's copy so that it does too.
const (
	case6SharedTTL = 30 * time.Second
	case6LocalTTL  = 5 * time.Second
)

// RedisLock is a row for a case-6-shaped shop, New(db, rdb, clk): a fleet
// sharing one Redis, with the rebuild lock in it.
func RedisLock[S Shop](technique, code string, n int, newShop func(*catalog.DB, *redis.Client, clock.Clock) S) Row {
	return Row{
		Technique: technique, Code: code, Case: n,
		Open: func(env *Env, _ int) Shop { return newShop(env.DB, env.Redis(), env.Clock) },
		// The first read fills Redis a time to live before the expiry. The
		// second, a whole number of local times to live before the expiry
		// and no later than the window's start, refills each server's copy
		// from Redis; the window's reads then refill it every local time to
		// live, the last time exactly one before the expiry.
		Warm: func(w Workload) []time.Duration {
			n := (w.Before + case6LocalTTL - 1) / case6LocalTTL
			return []time.Duration{-case6SharedTTL - w.Rebuild, -n * case6LocalTTL}
		},
		Invalidate: func(ctx context.Context, env *Env) error {
			return env.admin().Del(ctx, "shelf:"+catalog.Bestsellers).Err()
		},
		Seed: Seed{
			Reads: func(Workload) int { return 1 },
			Says:  "one load for the whole fleet",
		},
	}
}

// ServeStale is a row for a case-9-shaped shop: New(db, rdb, clk) as in
// case 6, with no copy in memory, and a value that goes stale (its logical
// expiry, 30 s, inside the value) long before Redis drops it. One fill a
// logical time to live before the expiry makes it stale at the expiry.
func ServeStale[S Shop](technique, code string, n int, newShop func(*catalog.DB, *redis.Client, clock.Clock) S) Row {
	r := RedisLock(technique, code, n, newShop)
	r.Warm = nil
	r.Invalidate = nil // its own Invalidate, the write path's half
	// The worked example gives serve stale no count; its table says
	// readers never wait.
	r.Seed = Seed{
		Table: &Claim{Stampede: "Yes, readers never wait", StaleSet: "No"},
		Why: "the reads that waited are the write's, not the expiry's: the writer's delete, half way through the " +
			"rebuild, leaves nothing stale to serve, and the readers after it wait for the rebuild, as case 9 means " +
			"a delete to do (its grace window is for a value that aged, never for one known to be wrong); played " +
			"with the write out of the rebuild, below, none waits at the expiry",
	}
	return r
}

// admin returns the writer's own client.
func (e *Env) admin() *redis.Client { return e.Redis() }

// XFetch is a row for a case-7-shaped shop, New(db, clk, random, ttl,
// beta), one per server, each with a seeded random source of its own.
func XFetch[S Shop](technique, code string, n int, newShop func(*catalog.DB, clock.Clock, func() float64, time.Duration, float64) S) Row {
	return Row{
		Technique: technique, Code: code, Case: n,
		Open: func(env *Env, server int) Shop {
			return newShop(env.DB, env.Clock, env.Random(server), env.TTL, env.Beta)
		},
		Seed: Seed{
			Reads:  func(Workload) int { return 1 },
			NoMiss: true,
			Says:   "typically one early refresh, and no miss",
			Why: "case 7 keeps the list in each server's memory, so each server refreshes its own copy: " +
				"one early refresh per server, spread over the last second, and still no miss. " +
				"The example's one refresh is XFetch in front of a cache the fleet shares",
		},
	}
}
