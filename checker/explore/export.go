package explore

import (
	"context"
	"time"
)

// NewContext returns a visitor's context for a case whose scenes are its
// own (cases 6 to 10): it ends when end is called, on whatever clock the
// caller's scene keeps, with context.Canceled, or with
// context.DeadlineExceeded when deadline is set; cancel ends it with
// context.Canceled either way, as a server ends a request's context when
// its handler returns. Whichever comes first ends it. Like the contexts
// of the scenes of cases 1 to 5, its Deadline (when it has one) is an
// hour of real time away, and its Value answers the visitor's number (see
// VisitorOf).
func NewContext(id int, deadline bool) (ctx context.Context, end, cancel func()) {
	c := newVisitCtx(id, deadline, time.Now().Add(time.Hour))
	return c, c.end, c.cancel
}

// VisitorOf returns the number of the visitor whose context ctx comes
// from (made by NewContext, or derived from one), or -1.
func VisitorOf(ctx context.Context) int { return visitorOf(ctx) }
