package harness

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"time"

	"stampede/checker/check"
	"stampede/checker/point"
	"stampede/checker/stack"
)

// Outcome is what one visitor got.
type Outcome[T any] struct {
	Value    T
	Err      error
	Panic    string // the panic and the student's line, when the call panicked (or ended its goroutine)
	Goexit   bool   // the call ended the visitor's goroutine with runtime.Goexit
	Returned bool   // false while the visitor is still inside the call
}

// Crowd is a group of visitors, each calling student code on its own
// goroutine, all started together.
//
// The crowd must not order its visitors: the race detector treats every
// lock, channel and atomic that two goroutines share as an ordering, and an
// ordering made by the harness would hide the student's races. So each
// visitor keeps its id and its outcome in a slot of its own, published by
// an atomic of its own, and the only thing visitors share is the count of
// those still inside, which they touch after their last call.
type Crowd[T any] struct {
	h       *H
	n       int
	done    chan struct{}
	left    atomic.Int64
	slots   []slot[T]
	started []atomic.Bool
	first   int // the number of the crowd's first visitor among all the H's visitors (see point.Rank)
}

type slot[T any] struct {
	id       atomic.Int64 // goroutine id, 0 until the visitor starts
	out      Outcome[T]   // written by the visitor before returned is set
	returned atomic.Bool
}

// Visit starts n visitors. Visitor i calls visit(ctx, i) with a context of
// its own. Panics are caught and kept with the student's line.
func Visit[T any](h *H, n int, visit func(ctx context.Context, i int) (T, error)) *Crowd[T] {
	c := &Crowd[T]{h: h, n: n, done: make(chan struct{}), slots: make([]slot[T], n), started: make([]atomic.Bool, n),
		first: int(h.visitors.Add(int64(n))) - n}
	c.left.Store(int64(n))
	if n == 0 {
		close(c.done)
	}
	for i := range n {
		go c.visit(i, visit)
	}
	return c
}

func (c *Crowd[T]) visit(i int, visit func(context.Context, int) (T, error)) {
	s := &c.slots[i]
	finished := false
	defer func() {
		if r := recover(); r != nil {
			s.out.Panic = fmt.Sprintf("%v%s", r, c.h.panicPlace(debug.Stack()))
		} else if !finished {
			// Neither a return nor a panic: runtime.Goexit ended the
			// goroutine, running its deferred calls on the way out.
			s.out.Goexit = true
			s.out.Panic = "the visitor's goroutine was ended (runtime.Goexit)" + c.h.panicPlace(debug.Stack())
		}
		s.out.Returned = true
		s.returned.Store(true)
		if c.left.Add(-1) == 0 {
			close(c.done)
		}
	}()
	// Each visitor has a context of its own, as each request to a server
	// does. Code that keys its flights by the context shows here as it
	// would in the shop. (It is not cancelled when the call returns: the
	// later cases' background work may outlive a visitor by design.)
	ctx := context.WithValue(c.h.ctx, visitorKey{}, i)
	// Named before it reaches the shop's first point, so that visitors
	// who get there together are ordered by number in every run.
	point.Rank(c.first + i)
	s.id.Store(int64(point.GoroutineID()))
	c.started[i].Store(true)
	s.out.Value, s.out.Err = visit(ctx, i)
	finished = true
}

// visitorKey marks each visitor's context with its number, which makes the
// contexts of two visitors different values.
type visitorKey struct{}

// panicPlace returns " at cases/case01/shop.go:31" for the innermost
// student frame of a panicking goroutine's stack, or "".
func (h *H) panicPlace(trace []byte) string {
	for _, g := range stack.Parse(string(trace)) {
		if f, ok := g.In(h.dir); ok {
			return " at " + stack.Where(f, check.Module)
		}
	}
	return ""
}

// Visitor returns the number (from 0) of the visitor whose goroutine has
// id g, for a story that names goroutines by who they are.
func (c *Crowd[T]) Visitor(g int) (int, bool) {
	for i := range c.slots {
		if c.slots[i].id.Load() == int64(g) {
			return i, true
		}
	}
	return 0, false
}

// allStarted reports whether every visitor has begun its call.
func (c *Crowd[T]) allStarted() bool {
	for i := range c.started {
		if !c.started[i].Load() {
			return false
		}
	}
	return true
}

// Started waits until every visitor has begun its call, and returns c: a
// driver that looks only at goroutines (fleet.Stage.Drive) then sees each
// of them at work or parked, never not yet there. It waits on the
// visitors' own flags, so it orders no visitor after another.
func (c *Crowd[T]) Started() *Crowd[T] {
	for !c.allStarted() {
		runtime.Gosched()
	}
	return c
}

// Settle waits until every visitor has started and the whole process has
// settled: each visitor is parked (at a gate, on a lock, on a channel) or
// has returned. It returns a *Stuck error at the hang bound.
func (c *Crowd[T]) Settle() error {
	return c.h.Settled(c.allStarted)
}

// Wait waits until every visitor has returned. When the visitors that are
// left are all parked where no timer can wake them, in consistent
// snapshots, they are deadlocked and Wait says so at once; code that keeps
// running is called stuck at the hang bound. Both are *Stuck errors.
func (c *Crowd[T]) Wait() error {
	var deadlock *Stuck
	err := c.h.await(func(gs []stack.Goroutine) bool {
		if c.left.Load() == 0 {
			return true
		}
		// Any goroutine that can still wake by itself, a visitor or a
		// goroutine the student started, may yet release the others.
		for _, g := range gs {
			if !g.Blocked() || stack.Timed(g.State) {
				return false
			}
		}
		deadlock = c.h.stuck(gs, Deadlocked, "deadlocked")
		return true
	}, c.done, time.Millisecond, hangBudget(c.h.bound))
	if err != nil {
		return err
	}
	if c.left.Load() > 0 && deadlock != nil {
		return deadlock
	}
	return nil
}

// Done reports whether every visitor has returned.
func (c *Crowd[T]) Done() bool { return c.left.Load() == 0 }

// Outcomes returns what each visitor got so far. A visitor still inside
// its call has Returned false and nothing else.
func (c *Crowd[T]) Outcomes() []Outcome[T] {
	out := make([]Outcome[T], c.n)
	for i := range c.slots {
		if c.slots[i].returned.Load() {
			out[i] = c.slots[i].out
		}
	}
	return out
}

// Panicked returns the first panic among the visitors, or "".
func (c *Crowd[T]) Panicked() string {
	for _, o := range c.Outcomes() {
		if o.Panic != "" {
			return o.Panic
		}
	}
	return ""
}

// Where says where the visitors that have not returned are waiting, in
// the student's lines, such as "5 visitors stuck at cases/case01/shop.go:22
// in sync.Mutex.Lock".
func (c *Crowd[T]) Where() string {
	return c.WhereOf(func(int) bool { return true })
}

// WhereOf says, as Where does, where the visitors that have not returned
// are waiting, of those whose number pick chooses.
func (c *Crowd[T]) WhereOf(pick func(i int) bool) string {
	ids := map[int]bool{}
	for i := range c.slots {
		if id := c.slots[i].id.Load(); id != 0 && !c.slots[i].returned.Load() && pick(i) {
			ids[int(id)] = true
		}
	}
	var mine []stack.Goroutine
	for _, g := range c.h.others() {
		if ids[g.ID] {
			mine = append(mine, g)
		}
	}
	return strings.Join(c.h.stuck(mine, 0, "").Places, "; ")
}
