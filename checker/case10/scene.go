package case10

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"stampede/checker/check"
	"stampede/checker/harness"
	"stampede/checker/stack"
	"stampede/shop/catalog"
	"stampede/shop/clock"
)

// Shop is what case 10 asks of a shop instance: a read path and a write
// path for a book's price, in cents.
type Shop interface {
	Price(ctx context.Context, book string) (int, error)
	SetPrice(ctx context.Context, book string, price int) error
}

// NewShop makes one instance of a case 10 shop.
type NewShop func(db *catalog.DB, rdb *redis.Client, clk clock.Clock) Shop

// book is the row every scene reads and writes, and its prices: the one
// before any write, and the ones the scenes' writes set.
const (
	book     = "The Night Library"
	oldPrice = 1299
	newPrice = 1499
	newer    = 1699
)

// scene is one check's world: shop instances sharing one database, one
// Redis and the checker's clock, with gates on the database's row reads
// (after the row is read, before the reply arrives) and on its commits
// (before the commit).
type scene struct {
	h       *harness.H
	world   *world
	db      *catalog.DB
	clock   *manual
	reads   *gates
	commits *gates
	newShop NewShop
	shops   []Shop
	taps    []*tap
	crowds  []*harness.Crowd[int]
	// keep are keys kept alive on a real server while the clock moves, as
	// a paused (not dead) instance would keep its lease.
	keep []key
	// quick settles on one snapshot (harness.Quiet) on a real server too,
	// instead of three in a row: the explorer moves the clock hundreds of
	// times a run.
	quick bool
}

// newScene starts n instances in a fresh world. The book's row is first
// written until its version is 9, with no gate armed, so that the scene's
// first write makes it 10: a version compared as text puts "9" after "10".
func newScene(h *harness.H, newShop NewShop, n int, reads, commits *gates) (*scene, error) {
	return newSceneOn(h, serverURL(), newShop, n, reads, commits)
}

// newSceneOn is newScene on the server at url, or on a fresh embedded
// miniredis when url is empty.
func newSceneOn(h *harness.H, url string, newShop NewShop, n int, reads, commits *gates) (*scene, error) {
	w, err := openWorld(h.Context(), url)
	if err != nil {
		return nil, err
	}
	s := &scene{h: h, world: w, clock: newManual(), reads: reads, commits: commits, newShop: newShop}
	s.db = catalog.New(catalog.WithCost(0), catalog.WithReadHook(reads.hook), catalog.WithCommitHook(commits.hook))
	commits.off.Store(true)
	for {
		row, _ := s.db.Peek(book)
		if row.Version >= 9 {
			break
		}
		if _, err := s.db.SetPrice(h.Context(), book, oldPrice); err != nil {
			w.Close()
			return nil, err
		}
	}
	commits.off.Store(false)
	for range n {
		s.add()
	}
	return s, nil
}

// add starts one more instance, and returns its index.
func (s *scene) add() int {
	t := &tap{now: s.clock.Now}
	s.taps = append(s.taps, t)
	s.shops = append(s.shops, s.newShop(s.db, s.world.client(t), s.clock))
	return len(s.shops) - 1
}

// Close opens every gate and hold, lets the visitors still inside the
// shops finish, so that nothing writes to Redis after it, and closes the
// world.
func (s *scene) Close() {
	s.reads.OpenAll()
	s.commits.OpenAll()
	for _, t := range s.taps {
		t.mu.Lock()
		h := t.hold
		t.hold = nil
		t.mu.Unlock()
		if h != nil {
			h.Release()
		}
	}
	_ = s.Drive(func() bool { return allDone(s.crowds) }, patience)
	s.world.Close()
}

// realMargin is how much longer than its own time to live a key the scene
// keeps alive lives on a real server, where Redis's time is real: a loaded
// machine may take seconds of it between two moves of the shops' clock.
const realMargin = 30 * time.Second

// KeepAlive keeps every key now in Redis as it is while the scene moves
// the shops' clock, as a paused (not dead) instance keeps its lease. On a
// real server each is given realMargin more to live at once, so that the
// real time the checker's own work takes does not expire it either.
func (s *scene) KeepAlive() error {
	keys, err := s.world.Keys(s.h.Context())
	if err != nil {
		return err
	}
	if !s.world.embedded() {
		for i := range keys {
			keys[i].ttl += realMargin
		}
		if err := s.world.Refresh(s.h.Context(), keys); err != nil {
			return err
		}
	}
	s.keep = keys
	return nil
}

// Read starts one visitor of instance i asking for the book's price.
func (s *scene) Read(i int) *harness.Crowd[int] { return s.Reads(i, 1) }

// Reads starts n visitors of instance i asking for the book's price.
func (s *scene) Reads(i, n int) *harness.Crowd[int] {
	shop := s.shops[i]
	return s.visit(n, func(ctx context.Context) (int, error) { return shop.Price(ctx, book) })
}

// Write starts one visitor of instance i setting the book's price.
func (s *scene) Write(i, price int) *harness.Crowd[int] {
	shop := s.shops[i]
	return s.visit(1, func(ctx context.Context) (int, error) { return price, shop.SetPrice(ctx, book, price) })
}

// visit starts a crowd and waits until every visitor has started.
func (s *scene) visit(n int, fn func(context.Context) (int, error)) *harness.Crowd[int] {
	var started atomic.Int64
	c := harness.Visit(s.h, n, func(ctx context.Context, _ int) (int, error) {
		started.Add(1)
		return fn(ctx)
	})
	s.crowds = append(s.crowds, c)
	for started.Load() < int64(n) {
		runtime.Gosched()
	}
	return c
}

// Truth returns the book's committed row.
func (s *scene) Truth() catalog.Row {
	row, _ := s.db.Peek(book)
	return row
}

// RowReads returns how many times the book's row has been read.
func (s *scene) RowReads() int { return s.db.RowReads(book) }

// Settle waits until every goroutine is parked: at a gate, on a lock, on a
// channel, held by a tap, or asleep on the checker's clock. Time does not
// move. On the embedded server one snapshot decides (harness.Quiet): its
// connections are in-memory pipes, so a reply on its way is a goroutine at
// work. On a real server the checks want three snapshots in a row.
func (s *scene) Settle() error {
	if s.quick || s.world.embedded() {
		return s.h.Quiet(func() bool { return true })
	}
	deadline := time.Now().Add(s.h.Bound())
	for streak := 0; streak < 3; {
		if parked() {
			streak++
		} else {
			streak = 0
		}
		if time.Now().After(deadline) {
			return &harness.Stuck{Why: fmt.Sprintf("still running after %v", s.h.Bound()), Places: s.places()}
		}
		if err := s.h.Context().Err(); err != nil {
			return err
		}
		time.Sleep(time.Millisecond)
	}
	return nil
}

// parked reports whether, in one snapshot, every goroutine but the
// caller's and the harness's watchdog's is parked.
func parked() bool {
	gs := stack.Parse(dump())
	for _, g := range gs[min(1, len(gs)):] { // the caller comes first
		if !g.Blocked() && !harness.Watcher(g) {
			return false
		}
	}
	return true
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

// Drive lets the scene run until done holds. Whenever every goroutine is
// parked and done does not hold yet, it moves the clock, and Redis's, to
// the next wake-up. It gives up with errNoBound once the clock has moved
// limit, and with a *harness.Stuck error when nothing sleeps on the clock
// and nothing moves.
func (s *scene) Drive(done func() bool, limit time.Duration) error {
	start := s.clock.Now()
	grace := 0
	for {
		if err := s.Settle(); err != nil {
			return err
		}
		if done() {
			return nil
		}
		if s.clock.Now().Sub(start) >= limit {
			return errNoBound
		}
		before := s.clock.Now()
		next, ok := s.clock.Upcoming()
		if !ok {
			if s.world.embedded() || grace >= 5 {
				return &harness.Stuck{Why: "waiting for something that never comes", Places: s.places()}
			}
			// On a real server a reply can be on its way in the kernel
			// with its reader not yet woken: look again, a few times.
			grace++
			time.Sleep(20 * time.Millisecond)
			continue
		}
		grace = 0
		if err := s.moveTo(before, next); err != nil {
			return err
		}
	}
}

// moveTo moves the clock from before to next, Redis's first: the
// scene is at rest, so nothing reads Redis between the two moves, and
// every shop woken by the second finds Redis already at the new time. The
// other order lets a woken shop write a key that the move of Redis's clock
// then ages by the whole step: a lock of 2 s taken at the end of a 30 s
// step would be gone at once (seen on a loaded machine, as two rebuilds of
// one shelf at once under the reference solution of case 9).
func (s *scene) moveTo(before, next time.Time) error {
	if err := s.world.Advance(s.h.Context(), next.Sub(before), s.keep); err != nil {
		return err
	}
	s.clock.Set(next)
	return nil
}

// Elapse lets d pass on the shops' clock, and in Redis with it, waking
// each sleeper in turn and letting the scene come to rest after each. A
// read or a write held at a gate stays held.
func (s *scene) Elapse(d time.Duration) error {
	end := s.clock.Now().Add(d)
	for {
		if err := s.Settle(); err != nil {
			return err
		}
		before := s.clock.Now()
		next := end
		if at, ok := s.clock.Earliest(); ok && !at.After(end) {
			next, _ = s.clock.Upcoming()
		} else if !end.After(before) {
			return nil
		}
		if err := s.moveTo(before, next); err != nil {
			return err
		}
	}
}

// places says where the goroutines running the shop's code are waiting.
func (s *scene) places() []string {
	count := map[string]int{}
	var order []string
	for _, g := range stack.Parse(dump()) {
		fr, ok := g.In(s.h.Dir())
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

// Cached describes what Redis holds for the shop, for a message: every key
// with its value and time to live.
func (s *scene) Cached() string {
	ctx := s.h.Context()
	keys, err := s.world.Keys(ctx)
	if err != nil {
		return "(cannot list the keys: " + err.Error() + ")"
	}
	if len(keys) == 0 {
		return "nothing"
	}
	var out []string
	for _, k := range keys {
		v, ok, err := s.world.Get(ctx, k.name)
		switch {
		case err != nil:
			v = "?"
		case !ok:
			continue
		}
		out = append(out, fmt.Sprintf("%s = %s (%s)", k.name, shorten(v), ttlText(k)))
	}
	return strings.Join(out, ", ")
}

func ttlText(k key) string {
	if k.forever {
		return "no time to live"
	}
	return fmt.Sprintf("%v to live", k.ttl.Round(time.Millisecond))
}

// Fresh sends one visitor to a new instance once the scene is over, and
// returns what it got: what any visitor would be served from now on.
func (s *scene) Fresh() (harness.Outcome[int], error) {
	c := s.Read(s.add())
	if err := s.Drive(c.Done, patience); err != nil {
		return harness.Outcome[int]{}, err
	}
	return c.Outcomes()[0], nil
}

// gates hold the database's row reads or writes, by their order, until the
// checker opens them.
type gates struct {
	off   atomic.Bool // set while the scene prepares: nothing is held or counted
	mu    sync.Mutex
	n     int
	nth   map[int]*harness.Gate // holds the n-th call (from 1)
	every *harness.Gate         // when set, holds every call
	all   []*harness.Gate
}

// holdEvery holds every call at one gate.
func holdEvery() *gates {
	g := harness.NewGate()
	return &gates{nth: map[int]*harness.Gate{}, every: g, all: []*harness.Gate{g}}
}

// holdCalls holds the calls numbered n (from 1), each at its own gate, and lets
// the others through.
func holdCalls(n ...int) *gates {
	gs := &gates{nth: map[int]*harness.Gate{}}
	for _, i := range n {
		g := harness.NewGate()
		gs.nth[i] = g
		gs.all = append(gs.all, g)
	}
	return gs
}

// Gate returns the gate of the n-th call.
func (g *gates) Gate(n int) *harness.Gate { return g.nth[n] }

// Calls returns how many calls have arrived.
func (g *gates) Calls() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.n
}

func (g *gates) hook(ctx context.Context, _ string) error {
	if g.off.Load() {
		return nil
	}
	g.mu.Lock()
	g.n++
	gate := g.nth[g.n]
	if g.every != nil {
		gate = g.every
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

func allDone(crowds []*harness.Crowd[int]) bool {
	for _, c := range crowds {
		if !c.Done() {
			return false
		}
	}
	return true
}

// stuckVerdict fails a check whose visitors never finished.
func stuckVerdict(err error) check.Verdict {
	msg := "the visitors never finished: " + err.Error()
	if strings.Contains(msg, " in sleep") || strings.Contains(msg, " in select") {
		msg += " (wait with the clock New is given, clk.Sleep, not time.Sleep, time.After or a ticker: the checker moves that clock by hand)"
	}
	return check.Failed("", msg)
}

// waitVerdict fails a check whose visitors did not finish.
func waitVerdict(err error, who string) check.Verdict {
	if errors.Is(err, errNoBound) {
		return check.Failed("", fmt.Sprintf("%s still waiting after %v of the shops' clock", who, patience))
	}
	return stuckVerdict(err)
}

// worldVerdict fails a check that could not talk to Redis.
func worldVerdict(err error) check.Verdict {
	return check.Failed("", "the checker could not use Redis: "+err.Error())
}

// cents prints a price: 1299 is 12.99.
func cents(p int) string { return fmt.Sprintf("%d.%02d", p/100, p%100) }

// shorten cuts a long command (a script's text) for a message.
func shorten(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 90 {
		return s[:87] + "..."
	}
	return s
}

// sentAfter lists the commands naming a key that instance i sent from
// place since in its log, for a message.
func (s *scene) sentAfter(i, since int) string {
	var sent []string
	for _, c := range s.taps[i].Log()[since:] {
		if len(c.keys) > 0 {
			sent = append(sent, shorten(c.String()))
		}
	}
	if len(sent) == 0 {
		return "nothing"
	}
	return strings.Join(sent, " | ")
}
