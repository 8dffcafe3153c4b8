package fleet

import (
	"context"
	"slices"
	"sync"
	"time"
)

// Clock is the shops' clock during a check: it stands still until the
// checker moves it. A shop that sleeps on it waits on a channel, so a
// settled process is one where every poller is asleep on this clock, and
// the checker decides when each of them wakes.
type Clock struct {
	grain    time.Duration // see tick; 0 wakes each sleeper at its own time
	mu       sync.Mutex
	now      time.Time
	sleepers []*sleeper
}

type sleeper struct {
	at   time.Time
	wake chan struct{}
}

// Start returns the moment every scene starts at: 09:00, when the list
// expires.
func Start() time.Time { return time.Date(2025, time.March, 3, 9, 0, 0, 0, time.UTC) }

// NewClock returns a clock at Start whose Upcoming wakes together the
// sleepers due within one tick of the earliest.
func NewClock() *Clock { return &Clock{now: Start(), grain: tick} }

// NewExactClock returns a clock at Start that wakes each sleeper at its
// own time, for a story's timelines.
func NewExactClock() *Clock { return &Clock{now: Start()} }

// Exact makes the clock wake each sleeper at its own time from now on, as
// NewExactClock's does. A scene calls it when its verdict rests on the
// order of two timers due less than a tick apart (a deadline at 5 s and an
// answer at 5.005 s): a grained clock would wake both in one move, and
// which of them ran first would be the scheduler's choice, not the
// code's.
func (c *Clock) Exact() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.grain = 0
}

// Elapsed returns how far the clock has moved since Start.
func (c *Clock) Elapsed() time.Duration { return c.Now().Sub(Start()) }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Sleep waits until the clock has been moved d forward, or ctx is done.
func (c *Clock) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	s := &sleeper{wake: make(chan struct{})}
	c.mu.Lock()
	s.at = c.now.Add(d)
	c.sleepers = append(c.sleepers, s)
	c.mu.Unlock()
	select {
	case <-s.wake:
		return nil
	case <-ctx.Done():
		c.mu.Lock()
		if i := slices.Index(c.sleepers, s); i >= 0 {
			c.sleepers = slices.Delete(c.sleepers, i, i+1)
		}
		c.mu.Unlock()
		return ctx.Err()
	}
}

// tick is the clock's grain: Next wakes together the sleepers due within
// one tick of the earliest, as a real clock's timers would, so that a
// hundred jittered polls do not need a hundred moves of the clock.
const tick = 10 * time.Millisecond

// Upcoming returns the time Next would move the clock to: the earliest
// wake-up time, or up to one tick past it when more sleepers are due by
// then. It reports false when nobody sleeps on the clock. The checker moves
// Redis's clock to it first and then calls Set: a shop woken by the move
// must find Redis already there (a lock taken by a woken shop before
// Redis's clock caught up would be aged by the whole move, and gone).
func (c *Clock) Upcoming() (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.sleepers) == 0 {
		return time.Time{}, false
	}
	earliest := c.sleepers[0].at
	for _, s := range c.sleepers {
		if s.at.Before(earliest) {
			earliest = s.at
		}
	}
	until := earliest.Add(c.grain)
	next := c.now
	for _, s := range c.sleepers {
		if !s.at.After(until) && s.at.After(next) {
			next = s.at
		}
	}
	return next, true
}

// Earliest returns the earliest wake-up time, if anyone sleeps.
func (c *Clock) Earliest() (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.sleepers) == 0 {
		return time.Time{}, false
	}
	earliest := c.sleepers[0].at
	for _, s := range c.sleepers {
		if s.at.Before(earliest) {
			earliest = s.at
		}
	}
	return earliest, true
}

// Set moves the clock to t and wakes everyone due by then. It reports
// false, and does nothing, when t is not after the clock's time.
func (c *Clock) Set(t time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !t.After(c.now) {
		return false
	}
	c.now = t
	c.sleepers = slices.DeleteFunc(c.sleepers, func(s *sleeper) bool {
		if s.at.After(c.now) {
			return false
		}
		close(s.wake)
		return true
	})
	return true
}

// Sleepers returns how many goroutines sleep on the clock.
func (c *Clock) Sleepers() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.sleepers)
}
