package case06

import (
	"context"
	"slices"
	"sync"
	"time"

	"stampede/checker/fleet"
	"stampede/checker/harness"
)

// Plan is the database's behaviour as a scene wants it: queries pass, wait
// at a gate, or fail. Its Hook is the catalog's hook (NewFleet's hook);
// case 9's scenes play on it too.
type Plan struct {
	mu    sync.Mutex
	gate  *harness.Gate // when set, every query waits here
	shelf string        // when set, only this shelf's queries wait at gate
	fail  error         // when set, every query fails with it
	boom  any           // when set, every query panics with it
	only  string        // when set, only this shelf's queries fail
	held  int           // queries that reached the gate since it was set
	open  []time.Time   // when each query waiting at a gate now began
	now   func() time.Time
	all   []*harness.Gate
	// slow, when set, is how long every query takes, slept with sleep.
	slow  time.Duration
	sleep func(context.Context, time.Duration) error
}

// Slow makes every later query take d more, slept with sleep (a Fleet's
// Hold, on the shops' clock): the database on a bad day, answering, but
// late. Its context ending cuts the sleep short, as a driver's would.
func (p *Plan) Slow(d time.Duration, sleep func(context.Context, time.Duration) error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.slow, p.sleep = d, sleep
}

// NewPlan returns a plan whose queries all pass. Until SetClock, it tells
// how long a query has waited by the machine's clock.
func NewPlan() *Plan { return &Plan{now: time.Now} }

// SetClock makes the plan tell how long a query has waited by the shops'
// clock c.
func (p *Plan) SetClock(c *fleet.Clock) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.now = c.Now
}

// Hook is the catalog's hook of a database that follows the plan: a query
// fails, waits at the gate until it opens or its context ends, or passes.
func (p *Plan) Hook(ctx context.Context, shelf string) error {
	p.mu.Lock()
	gate, fail, boom, slow, sleep := p.gate, p.fail, p.boom, p.slow, p.sleep
	if p.shelf != "" && p.shelf != shelf {
		gate = nil
	}
	if p.only != "" && p.only != shelf {
		fail = nil
	}
	if gate != nil {
		p.held++
	}
	p.mu.Unlock()
	if boom != nil {
		panic(boom) // the driver's panic, on the goroutine that queried
	}
	if fail != nil {
		return fail
	}
	if slow > 0 {
		if err := sleep(ctx, slow); err != nil {
			return err
		}
	}
	if gate == nil {
		return nil
	}
	p.mu.Lock()
	began := p.now()
	p.open = append(p.open, began)
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		p.open = slices.Delete(p.open, slices.Index(p.open, began), slices.Index(p.open, began)+1)
		p.mu.Unlock()
	}()
	return gate.Wait(ctx)
}

// Waiting returns how many queries wait at a gate now (queries begun and
// not yet ended, while the database hangs) and how long the oldest of them
// has waited.
func (p *Plan) Waiting() (n int, oldest time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, t := range p.open {
		oldest = max(oldest, p.now().Sub(t))
	}
	return len(p.open), oldest
}

// Began returns when each query waiting at a gate now began, oldest
// first.
func (p *Plan) Began() []time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.open)
}

// Hold holds every later query at a new gate, until Open (or until the
// gate it returns is opened, for the queries that reached it).
func (p *Plan) Hold() *harness.Gate { return p.HoldShelf("") }

// HoldShelf holds every later query of shelf ("" for every shelf) at a
// new gate, as Hold does, and lets the others pass.
func (p *Plan) HoldShelf(shelf string) *harness.Gate {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.gate = harness.NewGate()
	p.shelf = shelf
	p.held = 0
	p.all = append(p.all, p.gate)
	return p.gate
}

// Held returns how many queries have reached the gate since Hold.
func (p *Plan) Held() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.held
}

// Open lets every held query go on, and every later one pass.
func (p *Plan) Open() {
	p.mu.Lock()
	gates := slices.Clone(p.all)
	p.gate = nil
	p.shelf = ""
	p.mu.Unlock()
	for _, g := range gates {
		g.Open()
	}
}

// Panic makes every later query panic with v, as a database driver's bug
// does, on the goroutine that queried (nil: pass again).
func (p *Plan) Panic(v any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.boom = v
}

// Fail makes every later query fail with err (nil: succeed again).
func (p *Plan) Fail(err error) { p.FailShelf("", err) }

// FailShelf makes every later query of shelf ("" for every shelf) fail
// with err, and lets the others pass.
func (p *Plan) FailShelf(shelf string, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.fail, p.only = err, shelf
}
