package fleet

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"stampede/shop/catalog"
	"stampede/shop/clock"
)

// The faults a scene can stage, for the checks that a shop survives them:
// a Redis command that fails (Tap.Fail) or stalls (Tap.Hold, and every
// one that matches, Tap.Stall), an instance none of whose commands reach
// Redis for a while (Tap.Pause), a visitor whose context is cancelled
// between two of the shop's commands (Tap.CancelAfter), an instance whose
// clock is off (Clock.Skewed), and a database query that hangs, fails,
// panics or is slow (the Query hooks).
// Each only delays a goroutine or makes a call fail as production can; none
// makes a call return what the server did not say.

// fault is one armed fault of a Tap.
type fault struct {
	match func(Command) bool
	err   error // Fail: what the command returns; nil for CancelAfter
	left  int   // how many more commands it strikes; < 0 for every one
	// cancel is set by CancelAfter.
	cancel bool
}

// Fail makes the next n commands that match accepts fail with err, without
// reaching Redis (n < 0: every one from now on). It is how a scene stages
// a Redis that refuses writes, times out or drops the connection: go-redis
// hands the shop err as the command's error.
func (t *Tap) Fail(match func(Command) bool, err error, n int) {
	t.mu.Lock()
	t.faults = append(t.faults, &fault{match: match, err: err, left: n})
	t.mu.Unlock()
}

// CancelAfter cancels the context of the call that sent the next command
// match accepts, once Redis has answered it: the shop goes on to its next
// statement with its visitor gone, as a server's handler does when the
// client hangs up. The call's context must come from WithCancel; for any
// other, CancelAfter does nothing.
func (t *Tap) CancelAfter(match func(Command) bool) {
	t.mu.Lock()
	t.faults = append(t.faults, &fault{match: match, left: 1, cancel: true})
	t.mu.Unlock()
}

// Stall holds every command match accepts from now on, on its way to
// Redis, until the context it was sent on ends (the command then fails
// with the context's error, never sent) or until Release: a Redis, or a
// network, that has stopped answering, for a client that honours its
// contexts' deadlines. Unlike Hold it holds every such command, and says
// how many wait at once: work a shop leaves behind on contexts no visitor
// ends piles up there.
func (t *Tap) Stall(match func(Command) bool) *Stall {
	s := &Stall{match: match, release: make(chan struct{})}
	t.mu.Lock()
	t.stall = s
	t.mu.Unlock()
	return s
}

// Stall is a Tap's stall of commands (Tap.Stall).
type Stall struct {
	match   func(Command) bool // called on the sender's goroutine
	release chan struct{}
	once    sync.Once
	waiting atomic.Int64
}

// Waiting returns how many commands the stall holds now.
func (s *Stall) Waiting() int { return int(s.waiting.Load()) }

// Release lets every command held go on to Redis, and the ones after them.
func (s *Stall) Release() { s.once.Do(func() { close(s.release) }) }

// wait holds a command until Release (true) or until ctx ends (false).
func (s *Stall) wait(ctx context.Context) bool {
	s.waiting.Add(1)
	defer s.waiting.Add(-1)
	select {
	case <-s.release:
		return true
	case <-ctx.Done():
		return false
	}
}

// failed returns the error a Fail armed for c, the command at place at of
// the log, and notes it there; nil when no fault strikes it.
func (t *Tap) failed(at int, c Command) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, f := range t.faults {
		if f.cancel || f.left == 0 || !f.match(c) {
			continue
		}
		if f.left > 0 {
			f.left--
		}
		t.log[at].Said = "error: " + f.err.Error()
		return f.err
	}
	return nil
}

// Pause stops every command the instance sends from now on, on any of its
// goroutines, before it reaches Redis, until resume is called: the
// instance is frozen (a long garbage-collection pause, a stopped
// container) or cut off from Redis by the network, while the fleet goes
// on. Hold stops one command; Pause stops them all, so that a lease the
// instance keeps alive on a goroutine of its own lapses as it would. Each
// command is in the Log from the moment it waits. resume may be called
// more than once.
func (t *Tap) Pause() (resume func()) {
	ch := make(chan struct{})
	t.mu.Lock()
	t.paused = ch
	t.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			t.mu.Lock()
			if t.paused == ch {
				t.paused = nil
			}
			t.mu.Unlock()
			close(ch)
		})
	}
}

// cancelAfter cancels ctx when a CancelAfter matches the command at place
// at of the log.
func (t *Tap) cancelAfter(ctx context.Context, at int) {
	t.mu.Lock()
	var strike bool
	for _, f := range t.faults {
		if f.cancel && f.left != 0 && f.match(t.log[at]) {
			f.left--
			strike = true
			break
		}
	}
	t.mu.Unlock()
	if cancel, ok := ctx.Value(cancelKey{}).(context.CancelFunc); strike && ok {
		cancel()
	}
}

// cancelKey is the context key under which WithCancel keeps its cancel.
type cancelKey struct{}

// WithCancel is context.WithCancel, with the cancel function kept in the
// context so that Tap.CancelAfter can cancel the call in the middle.
func WithCancel(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	return context.WithValue(ctx, cancelKey{}, cancel), cancel
}

// Skewed returns a view of c that is off by offset: an instance whose
// clock runs offset ahead (or behind, when negative) of the others'. Its
// sleeps last as long as c's.
func (c *Clock) Skewed(offset time.Duration) clock.Clock { return skewed{c, offset} }

type skewed struct {
	c      *Clock
	offset time.Duration
}

func (s skewed) Now() time.Time { return s.c.Now().Add(s.offset) }

func (s skewed) Sleep(ctx context.Context, d time.Duration) error { return s.c.Sleep(ctx, d) }

// Steppable returns a view of c that is in step with it until the scene
// calls Step: an instance whose clock is stepped after it started, as a
// time synchronisation that corrects a host, or a virtual machine that
// resumes, steps it. Code that measured its offset to another clock once,
// at startup, is off by the step from then on.
func (c *Clock) Steppable() *SteppedClock { return &SteppedClock{c: c} }

// SteppedClock is a clock.Clock off c by what Step has added up to. Its
// sleeps last as long as c's.
type SteppedClock struct {
	c      *Clock
	mu     sync.Mutex
	offset time.Duration
}

// Step moves the clock's time by d (back, when negative), at once.
func (s *SteppedClock) Step(d time.Duration) {
	s.mu.Lock()
	s.offset += d
	s.mu.Unlock()
}

// Now returns the time the stepped clock tells.
func (s *SteppedClock) Now() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.c.Now().Add(s.offset)
}

// Sleep waits as c's Sleep does.
func (s *SteppedClock) Sleep(ctx context.Context, d time.Duration) error { return s.c.Sleep(ctx, d) }

// Hang is a query that never answers: it waits until its caller's context
// is done, or until over is (a scene's end; nil for none), and returns the
// context's error.
func Hang(over context.Context) catalog.Hook {
	return func(ctx context.Context, _ string) error {
		if over == nil {
			<-ctx.Done()
			return ctx.Err()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-over.Done():
			return fmt.Errorf("the query hung until the scene ended: %w", context.Canceled)
		}
	}
}

// FailWith is a query that fails at once with err, as a database that is
// down does.
func FailWith(err error) catalog.Hook {
	return func(context.Context, string) error { return err }
}

// PanicWith is a query whose driver panics with v, on the goroutine that
// called the database, wherever the shop runs it.
func PanicWith(v any) catalog.Hook {
	return func(context.Context, string) error { panic(v) }
}

// Slow is a query that takes d more on c, the scene's clock, or until its
// caller's context is done.
func Slow(c clock.Clock, d time.Duration) catalog.Hook {
	return func(ctx context.Context, _ string) error { return c.Sleep(ctx, d) }
}

// NthQuery applies hook to the queries numbered in n (from 1, in the order the
// database sees them) and lets the others through: FailWith on the first
// query only is NthQuery(FailWith(err), 1).
func NthQuery(hook catalog.Hook, n ...int) catalog.Hook {
	var mu sync.Mutex
	seen := 0
	return func(ctx context.Context, shelf string) error {
		mu.Lock()
		seen++
		strike := slices.Contains(n, seen)
		mu.Unlock()
		if !strike {
			return nil
		}
		return hook(ctx, shelf)
	}
}
