package compare

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"stampede/checker/harness"
	"stampede/shop/catalog"
	"stampede/shop/clock"
	"stampede/shop/events"
)

// opening is when every row's clock starts; the key expires at expiry.
var (
	opening = time.Date(2025, 3, 3, 9, 0, 0, 0, time.UTC)
	expiry  = opening.Add(2 * time.Minute)
)

// Written is what the catalogue holds for the bestsellers after the write:
// a new title at the top.
var Written = append([]string{"The Late Edition"}, catalog.Books(catalog.Bestsellers)...)

// Result is what one row measured. Times are on the virtual clock.
type Result struct {
	Technique string `json:"technique"`
	Code      string `json:"code"`
	Case      int    `json:"case,omitempty"`
	Err       string `json:"error,omitempty"` // why the row could not be played to the end

	Reads  int `json:"reads"`   // reads played in the window
	Source int `json:"source"`  // source reads in the window
	AtOnce int `json:"at_once"` // most source reads running at once
	Waited int `json:"waited"`  // reads that returned later than they arrived
	// WaitedBefore counts those of them that arrived before the write.
	WaitedBefore int           `json:"waited_before_write"`
	Longest      time.Duration `json:"longest"`  // the longest of those waits
	Failed       int           `json:"failed"`   // reads that got an error or a list the source never held
	Problem      string        `json:"problem"`  // the first such failure, in words
	Stale        int           `json:"stale"`    // reads that arrived after the write and got the old list
	StaleBy      time.Duration `json:"stale_by"` // the latest of them, after the write
	// Left is set when the old list was still served after the window, by
	// a cache that kept it; LeftFor is until when, after the write, as far
	// as the tail looked, and LeftPast is set when it still was at the end.
	Left     bool          `json:"left"`
	LeftFor  time.Duration `json:"left_for"`
	LeftPast bool          `json:"left_past"`
	Tail     time.Duration `json:"tail"`  // how far after the write the tail looked
	Chart    []int         `json:"chart"` // source reads per column of the window
	Elapsed  time.Duration `json:"elapsed"`
	// NoWrite says why the row's stale columns were not measured.
	NoWrite string `json:"no_write,omitempty"`
}

// Options bound a row's play in real time.
type Options struct {
	// Bound is how long, in real time, the process may take to come to
	// rest after one step: only code that never stops running reaches it.
	Bound time.Duration
}

// Play plays the workload through one row and measures it. A row whose code
// hangs, spins or panics comes back with Err set and what was measured
// before; only a broken environment is an error.
func Play(ctx context.Context, w Workload, row Row, opt Options) (Result, error) {
	if err := w.Check(); err != nil {
		return Result{}, err
	}
	if opt.Bound <= 0 {
		opt.Bound = 5 * time.Second
	}
	began := time.Now()
	p := newPlay(ctx, w, row, opt)
	defer p.env.close()
	// One processor: the play is one event at a time anyway, and a read
	// handed to a new goroutine then runs as soon as the driver yields,
	// with no other thread to wake.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	// A row allocates little that lives: collect less often.
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	p.base = notInGo()
	err := p.run()
	res := p.measure()
	res.Elapsed = time.Since(began)
	if err != nil {
		if ctx.Err() != nil {
			return res, ctx.Err()
		}
		res.Err = err.Error()
	}
	return res, nil
}

// play is one row's run.
type play struct {
	ctx   context.Context
	w     Workload
	row   Row
	opt   Options
	env   *Env
	shops []Shop
	write time.Time // when the catalogue changes

	counting atomic.Bool // the window is being played: count source reads
	pending  atomic.Int64
	base     uint64 // goroutines outside Go (the signal handler) at the start
	samples  [3]metrics.Sample

	drive harness.Driver // moves the row's clocks from rest to rest

	mu      sync.Mutex
	queries []*query // each counted source read
	reads   []read
	panic   string
}

// read is one reader's visit.
type read struct {
	at, left time.Time
	returned bool
	tail     bool
	got      version
	problem  string
}

// version says which list a read got.
type version int8

const (
	none    version = iota // an error
	old                    // the list before the write
	written                // the list after it
	wrong                  // neither
)

func newPlay(ctx context.Context, w Workload, row Row, opt Options) *play {
	p := &play{ctx: ctx, w: w, row: row, opt: opt, write: expiry.Add(w.WriteAt)}
	p.samples = [3]metrics.Sample{
		{Name: "/sched/goroutines/running:goroutines"},
		{Name: "/sched/goroutines/runnable:goroutines"},
		{Name: "/sched/goroutines/not-in-go:goroutines"},
	}
	clk := clock.NewFake(opening)
	hook := func(ctx context.Context, _ string) error {
		if p.counting.Load() {
			now := clk.Now()
			q := &query{start: now, end: now.Add(w.Rebuild)}
			p.mu.Lock()
			p.queries = append(p.queries, q)
			p.mu.Unlock()
			// A query runs the rebuild's time, unless its context ends
			// first: the code gave it up (case 6's flight, when its lock
			// expires), and the database stops with it.
			context.AfterFunc(ctx, func() {
				t := clk.Now()
				p.mu.Lock()
				defer p.mu.Unlock()
				if t.Before(q.end) {
					q.end = t
				}
			})
		}
		return nil
	}
	// A row read (the price of the write-path cases) is a source read as a
	// shelf query is.
	db := catalog.New(catalog.WithCost(w.Rebuild), catalog.WithClock(clk), catalog.WithHook(hook),
		catalog.WithReadHook(catalog.RowHook(hook)))
	pages := events.New(events.WithCost(w.Rebuild), events.WithClock(clk), events.WithHook(func(ctx context.Context, id int) error {
		return hook(ctx, "")
	}))
	p.env = &Env{Clock: clk, DB: db, Events: pages, TTL: w.TTL, Beta: 1, seed: 1}
	p.drive = p.driver()
	return p
}

// query is one source read: when it started, and when it ended.
type query struct {
	start, end time.Time
}

// errStuck is a row whose readers wait for something that never comes.
var errStuck = errors.New("stuck")

func (p *play) run() error {
	p.open()
	// The warm-up: every server reads at each of the row's moments, and
	// those reads are left to land before the window starts.
	warm := []time.Duration{-p.w.TTL - p.w.Rebuild}
	if p.row.Warm != nil {
		warm = p.row.Warm(p.w)
	}
	slices.Sort(warm)
	for _, off := range warm {
		for k := range p.shops {
			if err := p.send(expiry.Add(off), k, true); err != nil {
				return err
			}
		}
	}
	if err := p.land(); err != nil {
		return fmt.Errorf("warming up: %w", err)
	}
	if p.row.Pin != nil {
		if err := p.row.Pin(p.ctx, p.env, expiry.Sub(p.env.Clock.Now())); err != nil {
			return fmt.Errorf("pinning the warm-up's expiry: %w", err)
		}
		if err := p.rest(); err != nil {
			return err
		}
	}
	start, every := expiry.Add(-p.w.Before), p.w.every()
	if p.env.Clock.Now().After(start) {
		// A row whose warm-up ends inside the window: its first reads
		// would be played late. The row's Warm is wrong, not the code.
		return fmt.Errorf("the warm-up ran until %v after the window's start", p.env.Clock.Now().Sub(start))
	}

	p.counting.Store(true)
	n := int((p.w.Before + p.w.After) / every)
	p.reads = slices.Grow(p.reads, n)
	restarted, wrote := !p.row.Forever, false
	for i := range n {
		at := start.Add(time.Duration(i) * every)
		if !restarted && !at.Before(expiry) {
			if err := p.until(expiry); err != nil {
				return err
			}
			p.open() // the expiry of a cache that keeps its value for ever
			restarted = true
		}
		if !wrote && !at.Before(p.write) {
			if err := p.change(); err != nil {
				return err
			}
			wrote = true
		}
		if err := p.send(at, i%len(p.shops), false); err != nil {
			return err
		}
	}
	p.counting.Store(false)

	// The tail: a few reads a second per server, only to see how long the
	// old list is served.
	tailStart := expiry.Add(p.w.After)
	gap := time.Second / time.Duration(max(1, p.w.TailReads)*len(p.shops))
	for i := 0; ; i++ {
		at := tailStart.Add(time.Duration(i) * gap)
		if !at.Before(expiry.Add(p.w.Tail)) {
			break
		}
		if err := p.send(at, i%len(p.shops), true); err != nil {
			return err
		}
	}
	return p.land()
}

// open makes a shop for every server.
func (p *play) open() {
	p.shops = p.shops[:0]
	for k := range p.w.Servers {
		p.shops = append(p.shops, p.row.Open(p.env, k))
	}
}

// change writes the new list to the catalogue, and then does what the
// row's writer does to the cache.
func (p *play) change() error {
	if err := p.until(p.write); err != nil {
		return err
	}
	if p.row.Write != nil {
		if err := p.row.Write(p.ctx, p.env); err != nil {
			return fmt.Errorf("writing: %w", err)
		}
		return p.rest()
	}
	p.env.DB.Write(catalog.Bestsellers, Written)
	if inv, ok := p.shops[0].(invalidator); ok && p.row.Invalidate == nil {
		// The code has a write path of its own: the writer, on server 0,
		// uses it.
		if err := inv.Invalidate(p.ctx, catalog.Bestsellers); err != nil {
			return fmt.Errorf("invalidating after the write: %w", err)
		}
	} else if p.row.Invalidate != nil {
		if err := p.row.Invalidate(p.ctx, p.env); err != nil {
			return fmt.Errorf("invalidating after the write: %w", err)
		}
	}
	return p.rest()
}

// invalidator is a shop with a write path of its own (case 9's
// Invalidate): what a writer calls once the database has committed.
type invalidator interface {
	Invalidate(ctx context.Context, shelf string) error
}

// send plays one read of server k at time at. Warm-up reads and tail reads
// are counted only for staleness.
func (p *play) send(at time.Time, k int, aside bool) error {
	if err := p.ctx.Err(); err != nil {
		return err
	}
	if err := p.until(at); err != nil {
		return err
	}
	p.mu.Lock()
	i := len(p.reads)
	p.reads = append(p.reads, read{at: at, tail: aside})
	p.mu.Unlock()
	shop := p.shops[k]
	p.pending.Add(1)
	go p.visit(shop, i)
	if err := p.rest(); err != nil {
		return err
	}
	if p.pending.Load() > 0 && p.env.Clock.Sleepers() == 0 {
		return fmt.Errorf("%w: %d reads wait and nothing is asleep on the shop's clock to wake them%s",
			errStuck, p.pending.Load(), p.where())
	}
	return nil
}

// where says, after ": ", where the row's code waits, or returns "".
func (p *play) where() string {
	if w := where(p.row.Code); w != "" {
		return ": " + w
	}
	return ""
}

// readKey gives each read's context a value of its own, as each request
// to a server has a context of its own.
type readKey struct{}

// visit is one reader.
func (p *play) visit(shop Shop, i int) {
	ctx := context.WithValue(p.ctx, readKey{}, i)
	var books []string
	var err error
	defer func() {
		r := recover()
		now := p.env.Clock.Now()
		p.mu.Lock()
		rd := &p.reads[i]
		rd.left, rd.returned = now, true
		switch {
		case r != nil:
			rd.problem = fmt.Sprintf("a read panicked: %v", r)
			if p.panic == "" {
				p.panic = fmt.Sprintf("%v\n%s", r, debug.Stack())
			}
		case err != nil:
			rd.problem = "a read failed: " + err.Error()
		case slices.Equal(books, Written):
			rd.got = written
		case slices.Equal(books, catalog.Books(catalog.Bestsellers)):
			rd.got = old
		default:
			rd.got, rd.problem = wrong, fmt.Sprintf("a read got %q, a list the catalogue never held", books)
		}
		p.mu.Unlock()
		p.pending.Add(-1)
	}()
	books, err = shop.Top(ctx, catalog.Bestsellers)
}

// until moves the clock to t, stopping at each sleeper's wake-up on the
// way to let the process come to rest.
func (p *play) until(t time.Time) error { return p.drive.Until(t) }

// driver is the harness's driver of the row's time: rest is the row's
// own (the scheduler's counts, for speed), and a move moves Redis's clock
// with the shops'.
func (p *play) driver() harness.Driver {
	return harness.Driver{
		H:      harness.New(p.ctx, "", p.opt.Bound),
		Rest:   p.rest,
		Now:    p.env.Clock.Now,
		Next:   p.env.Clock.Next,
		MoveTo: func(t time.Time) error { p.set(t); return nil },
		Stuck: func() *harness.Stuck {
			return &harness.Stuck{Cause: harness.Deadlocked, Why: fmt.Sprintf("%d reads still wait once nothing else happens%s",
				p.pending.Load(), p.where())}
		},
	}
}

// set moves the shops' clock, and Redis's with it. Redis's goes first,
// while the process is at rest: a shop woken by the shops' clock must find
// Redis already at t, or a key it writes would be aged by the whole step.
func (p *play) set(t time.Time) {
	now := p.env.Clock.Now()
	if !t.After(now) {
		return
	}
	p.env.pass(t.Sub(now))
	p.env.Clock.Set(t)
}

// land moves the clock on until every read has returned.
func (p *play) land() error {
	err := p.drive.Drive(func() bool { return p.pending.Load() == 0 }, landLimit)
	var st *harness.Stuck
	switch {
	case errors.As(err, &st) && st.Cause == harness.Deadlocked:
		return fmt.Errorf("%w: %s", errStuck, st.Why)
	case errors.Is(err, harness.ErrNoBound):
		return fmt.Errorf("%w: %d reads still wait after %v of the shops' clock%s", errStuck, p.pending.Load(), landLimit, p.where())
	}
	return err
}

// landLimit is how long land waits on the shops' clock for the last reads:
// far longer than any row's rebuild, its polls and its budgets.
const landLimit = time.Hour

// rest waits until every goroutine but the caller's is parked: on a lock,
// a channel, or asleep on the clock. It gives up after the bound: code
// that never stops running.
func (p *play) rest() error {
	var deadline time.Time
	for try := 0; ; try++ {
		// Twice, a yield apart: the scheduler's counts are read without
		// stopping the world.
		if p.idle() {
			runtime.Gosched()
			if p.idle() {
				break
			}
		}
		switch {
		case try < 64:
			runtime.Gosched()
			continue
		case try == 64:
			deadline = time.Now().Add(p.opt.Bound)
		case time.Now().After(deadline):
			return fmt.Errorf("the shop's code was still running after %v of real time without coming to rest "+
				"(a loop that never ends, or a wait on the time package instead of the clock New is given)%s", p.opt.Bound, p.where())
		}
		if err := p.ctx.Err(); err != nil {
			return err
		}
		time.Sleep(20 * time.Microsecond)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.panic != "" {
		return fmt.Errorf("a read panicked: %s", p.panic)
	}
	return nil
}

// idle reports whether no goroutine but the caller's runs or waits to
// run, from the scheduler's own counts. p.base is how many goroutines sat
// outside Go (the signal handler's, in a system call for good) when the
// play began.
func (p *play) idle() bool {
	s := p.samples[:]
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return parked()
	}
	return s[0].Value.Uint64() <= 1 && s[1].Value.Uint64() == 0 && s[2].Value.Uint64() <= p.base
}

func notInGo() uint64 {
	s := []metrics.Sample{{Name: "/sched/goroutines/not-in-go:goroutines"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}
