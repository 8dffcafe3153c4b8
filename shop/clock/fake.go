package clock

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Fake is a virtual clock: it stands still until its owner moves it, and
// a Sleep on it lasts until the owner has moved the clock past its end. The
// checker and `shop run 7` use it to play minutes of traffic in a moment.
//
// Whoever drives a Fake moves it with Set or Advance, usually to the time
// Next reports, once every goroutine that could still act at the current
// time has done so. A Fake is safe for concurrent use.
type Fake struct {
	mu       sync.Mutex
	now      time.Time
	sleepers []*sleeper
}

// sleeper is one goroutine asleep on a Fake.
type sleeper struct {
	until time.Time
	wake  chan struct{} // closed when the clock reaches until
}

// NewFake returns a virtual clock that reads start.
func NewFake(start time.Time) *Fake { return &Fake{now: start} }

// Now returns the clock's current time.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// Sleep waits until the clock has been moved d past the current time, or
// until ctx is done. It returns ctx.Err() when it was cut short.
func (f *Fake) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	f.mu.Lock()
	s := &sleeper{until: f.now.Add(d), wake: make(chan struct{})}
	f.sleepers = append(f.sleepers, s)
	f.mu.Unlock()

	select {
	case <-s.wake:
		return nil
	case <-ctx.Done():
		f.mu.Lock()
		f.remove(s)
		f.mu.Unlock()
		return ctx.Err()
	}
}

// Next returns the earliest time at which a sleeper wakes, and false when
// nobody sleeps on the clock.
func (f *Fake) Next() (time.Time, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var next time.Time
	for i, s := range f.sleepers {
		if i == 0 || s.until.Before(next) {
			next = s.until
		}
	}
	return next, len(f.sleepers) > 0
}

// Sleepers returns how many goroutines are asleep on the clock.
func (f *Fake) Sleepers() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.sleepers)
}

// Set moves the clock to t and wakes every sleeper whose sleep ends by t.
// A clock never runs backwards: Set panics if t is before the current time.
func (f *Fake) Set(t time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if t.Before(f.now) {
		panic(fmt.Sprintf("clock: Set(%v) would move the clock back from %v", t, f.now))
	}
	f.now = t
	kept := f.sleepers[:0]
	for _, s := range f.sleepers {
		if s.until.After(t) {
			kept = append(kept, s)
		} else {
			close(s.wake)
		}
	}
	clear(f.sleepers[len(kept):])
	f.sleepers = kept
}

// Advance moves the clock forward by d, waking the sleepers that are due.
func (f *Fake) Advance(d time.Duration) { f.Set(f.Now().Add(d)) }

// remove takes s off the list of sleepers. The caller holds f.mu.
func (f *Fake) remove(s *sleeper) {
	for i, o := range f.sleepers {
		if o == s {
			f.sleepers = append(f.sleepers[:i], f.sleepers[i+1:]...)
			return
		}
	}
}
