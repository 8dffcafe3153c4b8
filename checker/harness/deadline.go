package harness

import (
	"context"
	"sync"
	"time"
)

// DeadlineAt returns a visitor's context whose deadline is at, and end,
// which ends it: Deadline reports at, and Done closes, with
// context.DeadlineExceeded, when the check calls end, as it does once the
// shops' clock has reached at (or at the moment it stages, for an at of
// the clock's now: a request that ran out of time during a commit, in the
// window before its timer fired). Pass a time on the shops' clock: code
// that reckons the time left on the clock it was given finds what the
// scene means, and code that copies the deadline onto a context of its
// own finds it behind it (the shops' clock starts in the past), as a
// request out of time would. Values come from parent; parent's own end
// does not reach it.
func DeadlineAt(parent context.Context, at time.Time) (ctx context.Context, end func()) {
	c := &pastDeadline{Context: context.WithoutCancel(parent), at: at, done: make(chan struct{})}
	return c, c.end
}

type pastDeadline struct {
	context.Context // the parent's values
	at              time.Time
	done            chan struct{}
	once            sync.Once
}

func (c *pastDeadline) Deadline() (time.Time, bool) { return c.at, true }
func (c *pastDeadline) Done() <-chan struct{}       { return c.done }

func (c *pastDeadline) Err() error {
	select {
	case <-c.done:
		return context.DeadlineExceeded
	default:
		return nil
	}
}

func (c *pastDeadline) end() { c.once.Do(func() { close(c.done) }) }
