package case06

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"stampede/checker/check"
	"stampede/checker/fleet"
	"stampede/checker/harness"
	"stampede/checker/shelves"
	"stampede/shop/catalog"
	"stampede/shop/clock"
)

// NewShop makes one instance of a case 6 shop.
type NewShop func(db *catalog.DB, rdb *redis.Client, clk clock.Clock) shelves.Shop

// Fleet is a scene of a check: shop instances sharing one database, one
// Redis world and the checker's clock. Case 9 plays its scenes on it too.
type Fleet struct {
	fleet.Stage
	db     *catalog.DB
	gates  *gates
	shops  []shelves.Shop
	taps   []*fleet.Tap
	crowds []*harness.Crowd[[]string]
	// newShop makes the instances; learnLocks makes a fleet of its own.
	newShop NewShop
	// locks are the keys that behave as the lock (see learnLocks), found
	// the first time a scene asks.
	locks map[string]bool
	// over ends when Close has let the visitors finish; see Hold.
	over context.Context
	end  context.CancelFunc
}

// start is a fleet with no instances yet, in world w.
func start(h *harness.H, w *fleet.World, g *gates, newShop NewShop) *Fleet {
	over, end := context.WithCancel(context.Background())
	return &Fleet{Stage: fleet.Stage{H: h, World: w, Clock: fleet.NewClock()}, gates: g, newShop: newShop, over: over, end: end}
}

// newFleet starts n instances in a fresh world.
func newFleet(h *harness.H, newShop NewShop, n int, g *gates) (*Fleet, error) {
	w, err := fleet.Open(h.Context(), fleet.ServerURL())
	if err != nil {
		return nil, err
	}
	f := start(h, w, g, newShop)
	f.db = catalog.New(catalog.WithCost(0), catalog.WithHook(g.hook))
	for range n {
		t := fleet.NewTap(nil)
		f.taps = append(f.taps, t)
		f.shops = append(f.shops, newShop(f.db, w.Client(t), f.Clock))
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

// Close opens every gate, lets the visitors still inside the shops finish,
// so that nothing writes to Redis after it, lets go what still sleeps in
// Hold, and closes the world.
func (f *Fleet) Close() {
	f.gates.OpenAll()
	_ = f.Drive(func() bool { return allDone(f.crowds) }, patience)
	f.end()
	f.World.Close()
}

// errOver is what Hold returns once the scene is over.
var errOver = errors.New("the scene is over")

// Hold sleeps d on the shops' clock for the checker's own hooks (a read's
// cost), until d has passed, ctx is done, or Close has ended the scene.
// Without the last, a read begun by a rebuild that outlived the visitors
// would sleep for ever on a clock nobody moves again, and a process that
// plays thousands of scenes would pile them up.
func (f *Fleet) Hold(ctx context.Context, d time.Duration) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(f.over, cancel)()
	err := f.Clock.Sleep(ctx, d)
	if err != nil && f.over.Err() != nil {
		return errOver
	}
	return err
}

// Visit starts n visitors of one instance, all asking for the bestsellers,
// and returns once each has started.
func (f *Fleet) Visit(instance, n int) *harness.Crowd[[]string] {
	shop := f.shops[instance]
	return f.visit(n, func(ctx context.Context, _ int) ([]string, error) {
		return shop.Top(ctx, catalog.Bestsellers)
	})
}

// Burst starts perInstance visitors on every instance at once.
func (f *Fleet) Burst(perInstance int) *harness.Crowd[[]string] {
	n := len(f.shops)
	return f.visit(n*perInstance, func(ctx context.Context, i int) ([]string, error) {
		return f.shops[i%n].Top(ctx, catalog.Bestsellers)
	})
}

// visit starts a crowd and waits until every visitor has started, so that
// Settle, which looks only at goroutines, sees them all.
func (f *Fleet) visit(n int, fn func(context.Context, int) ([]string, error)) *harness.Crowd[[]string] {
	c := harness.Visit(f.H, n, fn).Started()
	f.crowds = append(f.crowds, c)
	return c
}

// Reads returns how many times the fleet has read the source.
func (f *Fleet) Reads() int { return f.db.Queries(catalog.Bestsellers) }

// gates hold the database's queries, by their order, until the checker
// opens them.
type gates struct {
	mu    sync.Mutex
	n     int
	every *harness.Gate         // holds every query, when set
	nth   map[int]*harness.Gate // holds the n-th query (from 1)
	all   []*harness.Gate
	// dead makes a held query deaf to its context: its instance has died,
	// and nothing it started will end, whatever its deadlines say.
	dead bool
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

// holdDead holds the first query for good, deaf to its context, as the
// query of an instance that died mid-rebuild: Close alone lets it go.
func holdDead() *gates {
	gs, _ := holdNth(1)
	gs.dead = true
	return gs
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
	if g.dead {
		ctx = context.Background()
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
	case fleet.Subscribed():
		msg += " (a wait on a Redis subscription needs a bound too: wake on the clock New is given as well, " +
			"with clk.Sleep in a goroutine of its own, and give up past the budget)"
	case strings.Contains(msg, " in sleep") || strings.Contains(msg, " in select"):
		msg += " (wait with the clock New is given, clk.Sleep, not time.Sleep, time.After or a ticker: the checker moves that clock by hand)"
	}
	return check.Failed("", msg)
}
