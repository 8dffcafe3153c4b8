package case06

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"stampede/checker/check"
	"stampede/checker/harness"
	"stampede/checker/shelves"
	"stampede/checker/stack"
	"stampede/shop/catalog"
	"stampede/shop/clock"
)

// NewShop makes one instance of a case 6 shop.
type NewShop func(db *catalog.DB, rdb *redis.Client, clk clock.Clock) shelves.Shop

// fleet is a scene of a check: shop instances sharing one database, one
// Redis world and the checker's clock.
type fleet struct {
	h      *harness.H
	world  *world
	db     *catalog.DB
	clock  *manual
	gates  *gates
	shops  []shelves.Shop
	taps   []*tap
	crowds []*harness.Crowd[[]string]
	// newShop makes the instances; learnLocks makes a fleet of its own.
	newShop NewShop
	// locks are the keys that behave as the lock (see learnLocks), found
	// the first time a scene asks.
	locks map[string]bool
	// keep are keys Drive and Elapse keep alive while they move the shops'
	// clock, as their live holder would: a holder that is slow, not dead.
	keep []key
	// over ends when Close has let the visitors finish; see Hold.
	over context.Context
	end  context.CancelFunc
}

// start is a fleet with no instances yet, in world w.
func start(h *harness.H, w *world, g *gates, newShop NewShop) *fleet {
	over, end := context.WithCancel(context.Background())
	return &fleet{h: h, world: w, clock: newManual(), gates: g, newShop: newShop, over: over, end: end}
}

// newFleet starts n instances in a fresh world.
func newFleet(h *harness.H, newShop NewShop, n int, g *gates) (*fleet, error) {
	w, err := openWorld(h.Context(), serverURL())
	if err != nil {
		return nil, err
	}
	f := start(h, w, g, newShop)
	f.db = catalog.New(catalog.WithCost(0), catalog.WithHook(g.hook))
	for range n {
		t := &tap{}
		f.taps = append(f.taps, t)
		f.shops = append(f.shops, newShop(f.db, w.client(t), f.clock))
	}
	// A scene that holds queries may look for the lock: learn which key it
	// is now, once, before the scene starts.
	if n >= 2 && (g.every != nil || len(g.nth) > 0) {
		// If the solo scene fails, lockKeys learns again and says why.
		if locks, err := learnLocks(f); err == nil {
			f.locks = locks
		}
	}
	return f, nil
}

// untimed is a key the fleet left without a time to live, and the
// command after which it was seen so.
type untimed struct {
	shop int    // from 0
	sent string // the command, or the pipeline's commands
	key  string
}

// watchTTLs makes every instance's tap look at Redis after each command
// (or pipeline, or MULTI/EXEC) that may write, and note any key with no
// time to live. It decides from the server's state, whatever commands
// wrote the key: SETNX then EXPIRE, RPUSH then EXPIRE, INCR in one script
// and EXPIRE in another are each seen between their two commands, and
// a MULTI/EXEC or a script that does both at once is not.
func (f *fleet) watchTTLs() func() []untimed {
	var mu sync.Mutex
	var seen []untimed
	for i, t := range f.taps {
		t.mu.Lock()
		t.after = func(ctx context.Context, sent string) {
			keys, err := f.world.Keys(context.WithoutCancel(ctx))
			if err != nil {
				return
			}
			for _, k := range keys {
				if k.forever {
					mu.Lock()
					seen = append(seen, untimed{shop: i, sent: sent, key: k.name})
					mu.Unlock()
				}
			}
		}
		t.mu.Unlock()
	}
	return func() []untimed {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(seen)
	}
}

// Close opens every gate, lets the visitors still inside the shops finish,
// so that nothing writes to Redis after it, lets go what still sleeps in
// Hold, and closes the world.
func (f *fleet) Close() {
	f.gates.OpenAll()
	_ = f.Drive(func() bool { return allDone(f.crowds) }, patience)
	f.end()
	f.world.Close()
}

// errOver is what Hold returns once the scene is over.
var errOver = errors.New("the scene is over")

// Hold sleeps d on the shops' clock for the checker's own hooks (a read's
// cost), until d has passed, ctx is done, or Close has ended the scene.
// Without the last, a read begun by a rebuild that outlived the visitors
// would sleep for ever on a clock nobody moves again, and a process that
// plays thousands of scenes would pile them up.
func (f *fleet) Hold(ctx context.Context, d time.Duration) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(f.over, cancel)()
	err := f.clock.Sleep(ctx, d)
	if err != nil && f.over.Err() != nil {
		return errOver
	}
	return err
}

// Visit starts n visitors of one instance, all asking for the bestsellers,
// and returns once each has started.
func (f *fleet) Visit(instance, n int) *harness.Crowd[[]string] {
	shop := f.shops[instance]
	return f.visit(n, func(ctx context.Context, _ int) ([]string, error) {
		return shop.Top(ctx, catalog.Bestsellers)
	})
}

// Burst starts perInstance visitors on every instance at once.
func (f *fleet) Burst(perInstance int) *harness.Crowd[[]string] {
	n := len(f.shops)
	return f.visit(n*perInstance, func(ctx context.Context, i int) ([]string, error) {
		return f.shops[i%n].Top(ctx, catalog.Bestsellers)
	})
}

// visit starts a crowd and waits until every visitor has started, so that
// Settle, which looks only at goroutines, sees them all.
func (f *fleet) visit(n int, fn func(context.Context, int) ([]string, error)) *harness.Crowd[[]string] {
	var started atomic.Int64
	c := harness.Visit(f.h, n, func(ctx context.Context, i int) ([]string, error) {
		started.Add(1)
		return fn(ctx, i)
	})
	f.crowds = append(f.crowds, c)
	for started.Load() < int64(n) {
		runtime.Gosched()
	}
	return c
}

// Reads returns how many times the fleet has read the source.
func (f *fleet) Reads() int { return f.db.Queries(catalog.Bestsellers) }

// Settle waits until every goroutine is parked: at a gate, on a lock, on a
// channel, held by a tap, asleep on the checker's clock, or reading a Redis
// subscription (see idle). Time does not move. It fails with a
// *harness.Stuck error after the hang bound.
//
// On the embedded server one snapshot decides (harness.Quiet): the
// connections are in-memory pipes, so a reply on its way is a goroutine at
// work, never one asleep in the kernel. On a real server a reply can sit in
// the kernel with its reader not yet woken, so Settle wants three
// snapshots in a row, a millisecond apart.
func (f *fleet) Settle() error {
	if f.world.embedded() {
		return f.h.Quiet(func() bool { return true })
	}
	deadline := time.Now().Add(f.h.Bound())
	for streak := 0; streak < 3; {
		if f.parked() {
			streak++
		} else {
			streak = 0
		}
		if time.Now().After(deadline) {
			return &harness.Stuck{Why: fmt.Sprintf("still running after %v", f.h.Bound()), Places: f.places()}
		}
		if err := f.h.Context().Err(); err != nil {
			return err
		}
		time.Sleep(time.Millisecond)
	}
	return nil
}

// parked reports whether, in one snapshot, every goroutine but the
// caller's and the harness's watchdog's is parked.
func (f *fleet) parked() bool {
	gs := stack.Parse(dump())
	for _, g := range gs[min(1, len(gs)):] { // the caller comes first
		if !g.Blocked() && !idle(g) && !harness.Watcher(g) {
			return false
		}
	}
	return true
}

// idle reports whether g waits for a message on a Redis subscription. On a
// real server that goroutine reads from the network ("IO wait"), which no
// other goroutine of the process can end; a message comes only when an
// instance publishes, with a command the checker sees. So it counts as
// parked. (On the embedded server it waits on a channel and is parked
// anyway.) A goroutine waiting for the reply to a command it sent is not
// idle: the reply is on its way.
func idle(g stack.Goroutine) bool { return g.State == "IO wait" && onSubscription(g) }

// onSubscription reports whether g runs go-redis's subscription code.
func onSubscription(g stack.Goroutine) bool {
	for _, fr := range g.Frames {
		if strings.HasPrefix(fr.Func, "github.com/redis/go-redis/v9.(*PubSub).") ||
			strings.HasPrefix(fr.Func, "github.com/redis/go-redis/v9.(*channel).") {
			return true
		}
	}
	return false
}

// dump returns the stacks of every goroutine.
func dump() string {
	buf := make([]byte, 1<<16)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return string(buf[:n])
		}
		buf = make([]byte, 2*len(buf))
	}
}

// errNoBound is what Drive returns when visitors still wait after limit.
var errNoBound = errors.New("still waiting")

// Drive lets the fleet run until done holds. Whenever every goroutine is
// parked and done does not hold yet, it moves the clock to the next
// wake-up. It gives up with errNoBound once the clock has moved limit, and
// with a *harness.Stuck error when nothing sleeps on the clock and nothing
// moves: a visitor waits for something that will never come.
func (f *fleet) Drive(done func() bool, limit time.Duration) error {
	start := f.clock.Now()
	grace := 0
	for {
		if err := f.Settle(); err != nil {
			return err
		}
		if done() {
			return nil
		}
		if f.clock.Now().Sub(start) >= limit {
			return errNoBound
		}
		before := f.clock.Now()
		next, ok := f.clock.Upcoming()
		if !ok {
			if f.world.embedded() || grace >= 5 {
				return &harness.Stuck{Why: "waiting for something that never comes", Places: f.places()}
			}
			// On a real server a reply can be on its way in the kernel
			// with its reader not yet woken: look again, a few times.
			grace++
			time.Sleep(20 * time.Millisecond)
			continue
		}
		grace = 0
		if err := f.moveTo(before, next); err != nil {
			return err
		}
	}
}

// moveTo moves the clock from before to next, Redis's first: the
// fleet is at rest, so nothing reads Redis between the two moves, and
// every shop woken by the second finds Redis already at the new time. The
// other order lets a woken shop write a key that the move of Redis's clock
// then ages by the whole step: a lock of 2 s taken at the end of a 30 s
// step would be gone at once (seen on a loaded machine, as two rebuilds of
// one shelf at once under the reference solution of case 9).
func (f *fleet) moveTo(before, next time.Time) error {
	if err := f.world.Advance(f.h.Context(), next.Sub(before), f.keep); err != nil {
		return err
	}
	f.clock.Set(next)
	return nil
}

// Elapse lets d pass on the shops' clock, and in Redis with it, waking
// each sleeper in turn and letting the fleet come to rest after each, as
// Drive does, whether or not anyone sleeps. A query held at a gate stays
// held: this is the time a slow rebuild takes while the others wait.
func (f *fleet) Elapse(d time.Duration) error {
	end := f.clock.Now().Add(d)
	for {
		if err := f.Settle(); err != nil {
			return err
		}
		before := f.clock.Now()
		next := end
		if at, ok := f.clock.Earliest(); ok && !at.After(end) {
			next, _ = f.clock.Upcoming()
		} else if !end.After(before) {
			return nil
		}
		if err := f.moveTo(before, next); err != nil {
			return err
		}
	}
}

// places says where the goroutines running the shop's code are waiting,
// visitors or not (a flight may run on a goroutine of its own), such as
// "1 goroutine at cases/case06/shop.go:80 in chan receive".
func (f *fleet) places() []string {
	count := map[string]int{}
	var order []string
	for _, g := range stack.Parse(dump()) {
		fr, ok := g.In(f.h.Dir())
		if !ok {
			continue
		}
		place := "at " + stack.Where(fr, check.Module) + " in " + g.State
		if count[place] == 0 {
			order = append(order, place)
		}
		count[place]++
	}
	out := make([]string, len(order))
	for i, p := range order {
		noun := "goroutines"
		if count[p] == 1 {
			noun = "goroutine"
		}
		out[i] = fmt.Sprintf("%d %s %s", count[p], noun, p)
	}
	if len(out) == 0 {
		out = []string{"no goroutine is in the shop's code"}
	}
	return out
}

// gates hold the database's queries, by their order, until the checker
// opens them.
type gates struct {
	mu    sync.Mutex
	n     int
	every *harness.Gate         // holds every query, when set
	nth   map[int]*harness.Gate // holds the n-th query (from 1)
	all   []*harness.Gate
}

// holdEvery holds every query at one gate.
func holdEvery() (*gates, *harness.Gate) {
	g := harness.NewGate()
	return &gates{every: g, all: []*harness.Gate{g}}, g
}

// holdNth holds the queries numbered n (from 1), each at its own gate, and
// lets the others through.
func holdNth(n ...int) (*gates, []*harness.Gate) {
	gs := &gates{nth: map[int]*harness.Gate{}}
	for _, i := range n {
		g := harness.NewGate()
		gs.nth[i] = g
		gs.all = append(gs.all, g)
	}
	return gs, gs.all
}

// holdNone holds nothing.
func holdNone() *gates { return &gates{} }

func (g *gates) hook(ctx context.Context, shelf string) error {
	g.mu.Lock()
	g.n++
	gate := g.every
	if gate == nil {
		gate = g.nth[g.n]
	}
	g.mu.Unlock()
	if gate == nil {
		return nil
	}
	return gate.Wait(ctx)
}

// OpenAll opens every gate.
func (g *gates) OpenAll() {
	for _, gate := range g.all {
		gate.Open()
	}
}

// stuckVerdict fails a check whose visitors never finished.
func stuckVerdict(err error) check.Verdict {
	msg := "the visitors never finished: " + err.Error()
	switch {
	case subscribed():
		msg += " (a wait on a Redis subscription needs a bound too: wake on the clock New is given as well, " +
			"with clk.Sleep in a goroutine of its own, and give up past the budget)"
	case strings.Contains(msg, " in sleep") || strings.Contains(msg, " in select"):
		msg += " (wait with the clock New is given, clk.Sleep, not time.Sleep, time.After or a ticker: the checker moves that clock by hand)"
	}
	return check.Failed("", msg)
}

// subscribed reports whether a goroutine reads a Redis subscription.
func subscribed() bool {
	return slices.ContainsFunc(stack.Parse(dump()), onSubscription)
}

// worldVerdict fails a check that could not talk to Redis.
func worldVerdict(err error) check.Verdict {
	return check.Failed("", "the checker could not use Redis: "+err.Error())
}
