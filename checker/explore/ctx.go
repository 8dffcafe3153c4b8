package explore

import (
	"context"
	"sync"
	"time"
)

// visitorKey is the key under which a visitor's context answers its
// number, so that the explorer can tell whose context a query runs on
// (context.WithoutCancel keeps values).
type visitorKey struct{}

// visitCtx is a visitor's context. It ends when the scene's driver says,
// on the scene's clock, with context.Canceled or, for a visitor with a
// deadline, context.DeadlineExceeded. A real context.WithDeadline would
// end on the wall clock, which no scene can schedule.
//
// Its Deadline is an hour of real time away: a correct shop may hand the
// deadline on, but must not end anything early on its own account. Its
// Value answers only the visitor's number, so that the context package
// treats it as a foreign context and watches it through AfterFunc.
type visitCtx struct {
	id       int
	deadline time.Time
	isDead   bool // ends with DeadlineExceeded

	mu    sync.Mutex
	done  chan struct{}
	err   error
	after []func()
}

func newVisitCtx(id int, deadline bool, far time.Time) *visitCtx {
	return &visitCtx{id: id, isDead: deadline, deadline: far, done: make(chan struct{})}
}

// Deadline returns the far deadline of a visitor who has one.
func (c *visitCtx) Deadline() (time.Time, bool) {
	if !c.isDead {
		return time.Time{}, false
	}
	return c.deadline, true
}

// Done is closed when the context ends.
func (c *visitCtx) Done() <-chan struct{} { return c.done }

// Err returns nil until the context ends, then why it ended.
func (c *visitCtx) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Value returns the visitor's number for visitorKey, and nil otherwise.
func (c *visitCtx) Value(key any) any {
	if key == (visitorKey{}) {
		return c.id
	}
	return nil
}

// AfterFunc runs f on a goroutine of its own once the context ends, as
// context.AfterFunc does; the context package uses it to cancel contexts
// derived from this one without a goroutine per derived context.
func (c *visitCtx) AfterFunc(f func()) (stop func() bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		go f()
		return func() bool { return false }
	}
	i := len(c.after)
	c.after = append(c.after, f)
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.err != nil || c.after[i] == nil {
			return false
		}
		c.after[i] = nil
		return true
	}
}

// end ends the context as its kind says, once: past its deadline, or
// cancelled.
func (c *visitCtx) end() {
	if c.isDead {
		c.endWith(context.DeadlineExceeded)
	} else {
		c.endWith(context.Canceled)
	}
}

// cancel ends the context with context.Canceled whatever its kind, as a
// server cancels a request's context when its handler returns.
func (c *visitCtx) cancel() { c.endWith(context.Canceled) }

// endWith ends the context with err, once.
func (c *visitCtx) endWith(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return
	}
	c.err = err
	close(c.done)
	for _, f := range c.after {
		if f != nil {
			go f()
		}
	}
	c.after = nil
}

// ended reports whether the context has ended.
func (c *visitCtx) ended() bool { return c.Err() != nil }

// visitorOf returns the number of the visitor whose context ctx comes
// from, or -1.
func visitorOf(ctx context.Context) int {
	if id, ok := ctx.Value(visitorKey{}).(int); ok {
		return id
	}
	return -1
}
