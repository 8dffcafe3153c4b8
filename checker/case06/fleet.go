package case06

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
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
	// keep are keys Drive keeps alive on a real server, as their live
	// holder would, while it moves the shops' clock: Redis's time is real
	// there, and a slow machine must not let a held lock expire.
	keep []key
}

// newFleet starts n instances in a fresh world.
func newFleet(h *harness.H, newShop NewShop, n int, g *gates) (*fleet, error) {
	w, err := openWorld(h.Context(), serverURL())
	if err != nil {
		return nil, err
	}
	f := &fleet{h: h, world: w, clock: newManual(), gates: g}
	f.db = catalog.New(catalog.WithCost(0), catalog.WithHook(g.hook))
	for range n {
		t := &tap{}
		f.taps = append(f.taps, t)
		f.shops = append(f.shops, newShop(f.db, w.client(t), f.clock))
	}
	return f, nil
}

// Close opens every gate, lets the visitors still inside the shops finish,
// so that nothing writes to Redis after it, and closes the world.
func (f *fleet) Close() {
	f.gates.OpenAll()
	_ = f.Drive(func() bool { return allDone(f.crowds) }, patience)
	f.world.Close()
}

// Visit starts n visitors of one instance, all asking for the bestsellers.
func (f *fleet) Visit(instance, n int) *harness.Crowd[[]string] {
	shop := f.shops[instance]
	c := harness.Visit(f.h, n, func(ctx context.Context, _ int) ([]string, error) {
		return shop.Top(ctx, catalog.Bestsellers)
	})
	f.crowds = append(f.crowds, c)
	return c
}

// Burst starts perInstance visitors on every instance at once.
func (f *fleet) Burst(perInstance int) *harness.Crowd[[]string] {
	n := len(f.shops)
	c := harness.Visit(f.h, n*perInstance, func(ctx context.Context, i int) ([]string, error) {
		return f.shops[i%n].Top(ctx, catalog.Bestsellers)
	})
	f.crowds = append(f.crowds, c)
	return c
}

// Reads returns how many times the fleet has read the source.
func (f *fleet) Reads() int { return f.db.Queries(catalog.Bestsellers) }

// Settle waits until every goroutine is parked: at a gate, on a lock, on a
// channel, held by a tap, or asleep on the checker's clock. Time does not
// move.
func (f *fleet) Settle() error { return f.h.Settled(func() bool { return true }) }

// errNoBound is what Drive returns when visitors still wait after limit.
var errNoBound = errors.New("still waiting")

// Drive lets the fleet run until done holds. Whenever every goroutine is
// parked and done does not hold yet, it moves the clock to the next
// wake-up. It gives up with errNoBound once the clock has moved limit, and
// with a *harness.Stuck error when nothing sleeps on the clock and nothing
// moves: a visitor waits for something that will never come.
func (f *fleet) Drive(done func() bool, limit time.Duration) error {
	start := f.clock.Now()
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
		if err := f.world.Refresh(f.h.Context(), f.keep); err != nil {
			return err
		}
		if !f.clock.Next() {
			return &harness.Stuck{Why: "waiting for something that never comes", Places: f.places()}
		}
	}
}

// places says where the goroutines running the shop's code are waiting,
// visitors or not (a flight may run on a goroutine of its own), such as
// "1 goroutine at cases/case06/shop.go:80 in chan receive".
func (f *fleet) places() []string {
	buf := make([]byte, 1<<16)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	count := map[string]int{}
	var order []string
	for _, g := range stack.Parse(string(buf)) {
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
	if strings.Contains(msg, " in sleep") || strings.Contains(msg, " in select") {
		msg += " (wait with the clock New is given, clk.Sleep, not time.Sleep, time.After or a ticker: the checker moves that clock by hand)"
	}
	return check.Failed("", msg)
}

// worldVerdict fails a check that could not talk to Redis.
func worldVerdict(err error) check.Verdict {
	return check.Failed("", "the checker could not use Redis: "+err.Error())
}
