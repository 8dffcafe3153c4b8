package clock

import (
	"context"
	"time"
)

// WithTimeout returns a copy of ctx that is cancelled once d has passed on c,
// as context.WithTimeout does on the wall clock. Its cause
// (context.Cause) is then context.DeadlineExceeded. Call cancel as soon as
// the work it bounds is done: that ends the goroutine that waits on c.
//
// Use it to bound a wait on a clock the checker moves by hand: a
// semaphore's Acquire, a select on a flight's result.
func WithTimeout(ctx context.Context, c Clock, d time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(ctx)
	go func() {
		if c.Sleep(ctx, d) == nil {
			cancel(context.DeadlineExceeded)
		}
	}()
	return ctx, func() { cancel(context.Canceled) }
}
