package harness

import (
	"context"
	"fmt"
	"maps"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"

	"stampede/checker/check"
	"stampede/checker/stack"
)

// Outcome is what one visitor got.
type Outcome[T any] struct {
	Value    T
	Err      error
	Panic    string // the panic and the student's line, when the call panicked
	Returned bool   // false while the visitor is still inside the call
}

// Crowd is a group of visitors, each calling student code on its own
// goroutine, all started together.
type Crowd[T any] struct {
	h       *H
	started atomic.Int64
	n       int
	done    chan struct{}
	left    atomic.Int64

	mu  sync.Mutex
	out []Outcome[T]
	ids map[int]bool // the visitors' goroutine ids
}

// Visit starts n visitors. Visitor i calls visit(ctx, i). Panics are
// caught and kept with the student's line.
func Visit[T any](h *H, n int, visit func(ctx context.Context, i int) (T, error)) *Crowd[T] {
	c := &Crowd[T]{h: h, n: n, done: make(chan struct{}), out: make([]Outcome[T], n), ids: map[int]bool{}}
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
	var o Outcome[T]
	defer func() {
		if r := recover(); r != nil {
			o.Panic = fmt.Sprintf("%v%s", r, c.h.panicPlace(debug.Stack()))
		}
		o.Returned = true
		c.mu.Lock()
		c.out[i] = o
		c.mu.Unlock()
		if c.left.Add(-1) == 0 {
			close(c.done)
		}
	}()
	c.mu.Lock()
	c.ids[goroutineID()] = true
	c.mu.Unlock()
	c.started.Add(1)
	o.Value, o.Err = visit(c.h.ctx, i)
}

// goroutineID returns the calling goroutine's id, read from its stack.
func goroutineID() int {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	if gs := stack.Parse(string(buf) + "\n"); len(gs) > 0 {
		return gs[0].ID
	}
	return -1
}

// Where says where the visitors that have not returned are waiting, in
// the student's lines, such as "5 visitors stuck at cases/case01/shop.go:22
// in sync.Mutex.Lock".
func (c *Crowd[T]) Where() string {
	c.mu.Lock()
	ids := maps.Clone(c.ids)
	c.mu.Unlock()
	var mine []stack.Goroutine
	for _, g := range c.h.others() {
		if ids[g.ID] {
			mine = append(mine, g)
		}
	}
	return strings.Join(c.h.stuck(mine, "").Places, "; ")
}

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

// Settle waits until every visitor has started and the whole process has
// settled: each visitor is parked (at a gate, on a lock, on a channel) or
// has returned. It returns a *Stuck error at the hang bound.
func (c *Crowd[T]) Settle() error {
	return c.h.Settled(func() bool { return c.started.Load() == int64(c.n) })
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
			if !stack.Parked(g.State) || stack.Timed(g.State) {
				return false
			}
		}
		deadlock = c.h.stuck(gs, "deadlocked")
		return true
	}, c.done)
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

// Outcomes returns what each visitor got so far.
func (c *Crowd[T]) Outcomes() []Outcome[T] {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Outcome[T](nil), c.out...)
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
