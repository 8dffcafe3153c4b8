package harness

import (
	"context"
	"sync"
	"time"
)

// PastDeadline returns a visitor's context whose deadline, at, is already
// reached, and end, which ends it: Deadline reports at, and Done closes,
// with context.DeadlineExceeded, only when end is called. It is a request
// that ran out of time while a call was in progress, in the window before
// its timer fired: a check ends it at the moment it stages (a commit, say).
// Pass the shops' clock's now as at: code that copies the deadline onto a
// context of its own (a real timer: the shops' clock starts in the past)
// or reckons the time left on the clock it was given finds none, as it
// would in production. Values come from parent; parent's own end does not
// reach it.
func PastDeadline(parent context.Context, at time.Time) (ctx context.Context, end func()) {
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
