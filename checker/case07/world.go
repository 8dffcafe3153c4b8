package case07

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"stampede/checker/harness"
	"stampede/shop/catalog"
	"stampede/shop/clock"
)

// opening is when every world's clock starts: 09:00 on a Monday.
var opening = time.Date(2025, 3, 3, 9, 0, 0, 0, time.UTC)

// world plays reads against shops on virtual time, as a discrete-event
// simulation. Every shop's database sleeps on one fake clock. Reads arrive
// one at a time; after each, the world waits until the read has returned
// or the whole process has come to rest (every goroutine parked: on a
// lock, a channel, or asleep on the clock), and only then moves the clock,
// to the next arrival or to the next sleeper's wake-up, whichever comes
// first. So everything that can happen at one instant happens before the
// next, and a run is the same every time, whatever the machine's load.
//
// Reads are sent by a driver goroutine that calls the shop itself, because
// handing each read to another goroutine would cost more than the read:
// minutes of traffic are tens of thousands of reads. Most reads are hits
// that return at once; then the driver checks that no goroutine was
// started or woken (harness.Idle) and goes on. A read that waits inside
// the shop holds the driver up, so a watch goroutine looks in on it when a
// read may wait (see watch): once a snapshot shows every goroutine parked
// with the read still inside, the read is waiting, and the watch takes
// over as the driver. The old driver, once its read returns, records it
// and leaves. Only one goroutine drives at a time; the atomic hand-over of
// `inside` orders one driver's work before the next's.
type world struct {
	h     *harness.H
	clk   *clock.Fake
	shops []Shop
	want  map[string][]string // shelf -> the database's list

	mu      sync.Mutex // guards queries, reads and agents, written on many goroutines
	queries []query
	reads   []read

	// inside is 1 + the number of the read the driver is inside the shop
	// for, or 0. Whoever swaps it from a read's number to 0 drives.
	inside atomic.Int64
	alarm  chan int64 // 1 + a read that may wait, for the watch

	// The driver's state: touched only by the goroutine that drives, or by
	// the caller of drive once it has returned.
	events   func(i int) (event, bool)
	cursor   int           // the next event
	pending  map[int]bool  // reads sent and not yet returned
	baseline int           // runtime.NumGoroutine() at the last rest
	stopped  chan struct{} // closed when a drive ends
	fault    error         // why it ended early
	// hitInFlight is whether a read has returned at once while a query
	// was in flight, since the clock last had no sleeper.
	hitInFlight bool

	agents []*harness.Crowd[struct{}] // the drive's goroutines, guarded by mu

	driver harness.Driver // moves the clock from rest to rest (until)
}

// event is one read of a script: at a time, of a shelf, from a shop.
type event struct {
	at    time.Time
	shop  int
	shelf string
}

// query is one database query: a recompute.
type query struct {
	shop       int
	shelf      string
	start, end time.Time
	by         int // the read whose context it ran with, or -1
}

// read is one reader's visit.
type read struct {
	shop          int
	shelf         string
	arrived, left time.Time
	returned      bool
	err           error
	wrong         []string // what it got, when that was not the database's list
}

// waited reports whether the read returned later than it arrived.
func (r read) waited() bool { return r.returned && r.left.After(r.arrived) }

// readKey marks a driver's context with the number of the read it is on
// (an *atomic.Int64), so that the database hook can tell which read a
// query ran for.
type readKey struct{}

func newWorld(h *harness.H) *world {
	w := &world{
		h:        h,
		clk:      clock.NewFake(opening),
		want:     map[string][]string{},
		pending:  map[int]bool{},
		alarm:    make(chan int64, 1),
		baseline: runtime.NumGoroutine(),
	}
	for _, shelf := range []string{catalog.Bestsellers, catalog.NewReleases, catalog.StaffPicks} {
		w.want[shelf] = catalog.Books(shelf)
	}
	w.driver = harness.Driver{
		H:      h,
		Rest:   w.rest,
		Now:    w.clk.Now,
		Next:   w.clk.Next,
		MoveTo: func(t time.Time) error { w.clk.Set(t); return nil },
	}
	return w
}

// shopConfig is how a shop is made: what its query costs, how long a value
// lives, XFetch's beta, and the seed of its random source, which returns 0
// about once in zeroOdds draws when zeros is set (the story only).
type shopConfig struct {
	cost  time.Duration
	ttl   time.Duration
	beta  float64
	seed  uint64
	zeros bool
}

// open makes a shop with its own database and random source, and returns
// its number.
func (w *world) open(newShop New, cfg shopConfig) int {
	k, _ := w.openSource(newShop, cfg)
	return k
}

// openSource is open, and returns the shop's random source too.
func (w *world) openSource(newShop New, cfg shopConfig) (int, *source) {
	src := newSource(cfg.seed, cfg.zeros)
	return w.openWith(newShop, cfg, src.draw), src
}

// openWith is open with a random source that may be shared with other
// shops.
func (w *world) openWith(newShop New, cfg shopConfig, random func() float64) int {
	k := len(w.shops)
	record := func(ctx context.Context, shelf string) error {
		by := -1
		if current, ok := ctx.Value(readKey{}).(*atomic.Int64); ok {
			by = int(current.Load())
		}
		if by >= 0 {
			w.alert(by)
		}
		now := w.clk.Now()
		w.mu.Lock()
		w.queries = append(w.queries, query{shop: k, shelf: shelf, start: now, end: now.Add(cfg.cost), by: by})
		w.mu.Unlock()
		return nil
	}
	db := catalog.New(catalog.WithCost(cfg.cost), catalog.WithClock(w.clk), catalog.WithHook(record))
	w.shops = append(w.shops, newShop(db, w.clk, random, cfg.ttl, cfg.beta))
	return k
}

// drive plays the reads events gives (events(i) for i = 0, 1, ... until it
// reports false), each at its time, and returns once the last has been sent
// and has returned or is waiting with the process at rest. Reads still
// waiting are left in w.pending.
func (w *world) drive(events func(i int) (event, bool)) error {
	w.events, w.cursor, w.fault = events, 0, nil
	w.stopped = make(chan struct{})
	w.agent(w.lead)
	select {
	case <-w.stopped:
		return w.fault
	case <-w.h.Context().Done():
		return w.h.Context().Err()
	}
}

// lead begins a drive: it sets a watch on itself, lets the process come to
// rest, and drives.
func (w *world) lead(ctx context.Context) {
	w.agent(w.watch)
	if err := w.rest(); err != nil {
		w.stop(err)
		return
	}
	w.run(ctx)
}

// agent starts a goroutine of the drive, as a visitor so that the harness
// can say where it is stuck in the shop's code.
func (w *world) agent(fn func(context.Context)) {
	c := harness.Visit(w.h, 1, func(ctx context.Context, _ int) (struct{}, error) {
		fn(ctx)
		return struct{}{}, nil
	})
	w.mu.Lock()
	w.agents = append(w.agents, c)
	w.mu.Unlock()
}

// stop ends the drive.
func (w *world) stop(err error) {
	w.fault = err
	close(w.stopped)
}

// run drives: it sends the events' reads, one at a time, until the events
// end or another goroutine takes over.
func (w *world) run(ctx context.Context) {
	current := new(atomic.Int64)
	ctx = context.WithValue(ctx, readKey{}, current)
	for {
		ev, ok := w.events(w.cursor)
		if !ok {
			w.stop(nil)
			return
		}
		w.cursor++
		if err := w.until(ev.at); err != nil {
			w.stop(err)
			return
		}
		i := w.arrive(ev)
		current.Store(int64(i))
		// While a query is in flight a read may wait for it. Whether reads
		// do is a habit of the shop: the watch is alerted for the first
		// read of each flight, and for the rest only if that one waited.
		inFlight := w.clk.Sleepers() > 0
		if !inFlight {
			w.hitInFlight = false
		}
		alarm := inFlight && !w.hitInFlight
		// From here until inside is swapped back, the watch may take
		// over: the driver's state must not be touched in between, and the
		// store to inside publishes it.
		w.inside.Store(int64(i + 1))
		if alarm {
			w.alert(i)
		}
		// Each read has a context of its own, cancelled the moment it
		// returns, as net/http's handlers' are.
		rctx, done := context.WithCancel(ctx)
		books, err := w.shops[ev.shop].Top(rctx, ev.shelf)
		done()
		kept := w.inside.CompareAndSwap(int64(i+1), 0)
		w.answer(i, ev.shelf, books, err)
		if !kept {
			return // the read waited, and the watch drives now
		}
		w.hitInFlight = w.hitInFlight || inFlight
		// A hit that started no goroutine and woke none leaves the process
		// as it was.
		if runtime.NumGoroutine() != w.baseline || !w.h.Idle() {
			if err := w.rest(); err != nil {
				w.stop(err)
				return
			}
		}
	}
}

// watch looks in on the driver, and takes over when the driver's read is
// waiting inside the shop with the process at rest.
//
// It looks closely only when told a read may wait: when the driver sends a
// read while a query sleeps on the clock (the read may wait for it), or when
// a query starts for the read in flight (the read may be running it). Then
// it takes snapshots until the read returns or everything is parked. Any
// other wait (a deadlock, a sleep on real time) is found by a slow look,
// every fallback: the same read inside the shop at two looks.
func (w *world) watch(ctx context.Context) {
	slow := time.NewTicker(fallback)
	defer slow.Stop()
	var seen int64
	for {
		var in int64
		select {
		case <-w.stopped:
			return
		case <-ctx.Done():
			return
		case in = <-w.alarm:
		case <-slow.C:
			if in = w.inside.Load(); in == 0 || in != seen {
				seen = in
				continue
			}
		}
		for since := time.Now(); w.inside.Load() == in; {
			if time.Since(since) > w.h.Bound() && w.inside.CompareAndSwap(in, 0) {
				w.stop(fmt.Errorf("a read has been inside the shop for %v, neither returning nor waiting: %s",
					w.h.Bound(), w.h.Blocked()))
				return
			}
			if w.h.Parked() && w.inside.CompareAndSwap(in, 0) {
				w.pending[int(in-1)] = true
				w.hitInFlight = false
				w.agent(w.watch)
				if err := w.settled(); err != nil {
					w.stop(err)
					return
				}
				w.run(ctx)
				return
			}
			runtime.Gosched()
		}
	}
}

// alert tells the watch that read i may wait inside the shop.
func (w *world) alert(i int) {
	select {
	case w.alarm <- int64(i + 1):
	default: // the watch has an alarm to see to already
	}
}

// fallback is how often, in real time, the watch looks in on the driver
// without being alerted. It decides only how soon an unexpected wait is
// found, never what happens.
const fallback = 2 * time.Millisecond

// arrive records a read arriving now.
func (w *world) arrive(ev event) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.reads = append(w.reads, read{shop: ev.shop, shelf: ev.shelf, arrived: w.clk.Now()})
	return len(w.reads) - 1
}

// answer records what read i got.
func (w *world) answer(i int, shelf string, books []string, err error) {
	now := w.clk.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	r := &w.reads[i]
	r.left, r.returned, r.err = now, true, err
	if err == nil && !slices.Equal(books, w.want[shelf]) {
		r.wrong = append([]string{}, books...) // not nil, even for a nil list
	}
}

func (w *world) returned(i int) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.reads[i].returned
}

// rest waits until every goroutine is parked, then takes stock.
func (w *world) rest() error {
	if err := w.h.Quiet(func() bool { return true }); err != nil {
		return err
	}
	return w.settled()
}

// settled takes stock once the process is at rest: which reads have
// returned, and whether the run can go on. A panic in the shop, or reads
// left waiting with nothing asleep on the clock to wake them, end it.
func (w *world) settled() error {
	w.baseline = runtime.NumGoroutine()
	for i := range w.pending {
		if w.returned(i) {
			delete(w.pending, i)
		}
	}
	if p := w.panicked(); p != "" {
		return fmt.Errorf("a read panicked: %s", p)
	}
	if len(w.pending) > 0 && w.clk.Sleepers() == 0 {
		return fmt.Errorf("%d reads are waiting and nothing is asleep on the shop's clock to wake them "+
			"(tell the time and sleep on the clock New is given, not with the time package): %s",
			len(w.pending), w.h.Blocked())
	}
	return nil
}

// panicked returns the first panic of an agent that has ended, or "", and
// forgets the agents that ended well.
func (w *world) panicked() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	live := w.agents[:0]
	for _, a := range w.agents {
		if !a.Done() {
			live = append(live, a)
		} else if p := a.Panicked(); p != "" {
			return p
		}
	}
	clear(w.agents[len(live):])
	w.agents = live
	return ""
}

// until moves the clock to t, stopping at each sleeper's wake-up on the way
// to let the process come to rest.
func (w *world) until(t time.Time) error { return w.driver.Until(t) }

// errRestless is a shop whose waiting readers are never let go.
var errRestless = errors.New("reads are still waiting though the clock has run on")

// finish moves the clock on until every read has returned and the
// recomputes in flight have ended. A shop that keeps sleeping on the clock
// by itself (a refresher on a timer) is left asleep once its readers are
// done.
func (w *world) finish() error {
	for steps := 0; steps < 10_000; steps++ {
		next, ok := w.clk.Next()
		if !ok || len(w.pending) == 0 && steps >= 100 {
			break
		}
		w.clk.Set(next)
		if err := w.rest(); err != nil {
			return err
		}
	}
	if len(w.pending) > 0 {
		return fmt.Errorf("%w: %s", errRestless, w.h.Blocked())
	}
	return nil
}

// snapshot returns copies of the queries and reads so far.
func (w *world) snapshot() ([]query, []read) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.queries), slices.Clone(w.reads)
}

// steady is traffic on one shop: a read of the bestseller list every
// `every`, for `span`.
type steady struct {
	shop  shopConfig
	every time.Duration
	span  time.Duration
}

// play plays steady traffic on a new shop and lets the last recompute
// finish.
func (w *world) play(newShop New, tr steady) error { return w.playOn(w.open(newShop, tr.shop), tr) }

// playOn plays steady traffic on shop k, opened already, and lets the last
// recompute finish.
func (w *world) playOn(k int, tr steady) error {
	n := int(tr.span / tr.every)
	t0 := w.clk.Now()
	w.mu.Lock()
	w.reads = slices.Grow(w.reads, n)
	w.mu.Unlock()
	err := w.drive(func(i int) (event, bool) {
		return event{at: t0.Add(time.Duration(i) * tr.every), shop: k, shelf: catalog.Bestsellers}, i < n
	})
	if err != nil {
		return err
	}
	return w.finish()
}
