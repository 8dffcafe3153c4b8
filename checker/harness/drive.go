package harness

import (
	"errors"
	"time"
)

// ErrNoBound is what Driver.Drive returns when its condition still does
// not hold after its limit of the scene's time.
var ErrNoBound = errors.New("still waiting")

// A Driver moves a scene's virtual time, as a discrete-event simulation
// does: it waits until the process is at rest (every goroutine parked on
// a lock, a channel, a gate, or asleep on the scene's clock), and only
// then moves the clock to the next wake-up, so that everything that can
// happen at one instant happens before the next, however loaded the
// machine. Every virtual-time scene of the lab is driven by one: the
// Redis fleets (fleet.Stage), the stories, the explorers and compare.
type Driver struct {
	// Rest waits until the process is at rest, and returns a *Stuck error
	// when it does not come to rest within the hang bound (H.Quiet, or a
	// fleet's Settle).
	Rest func() error
	// Now returns the scene's time, and Next the time to move it to next:
	// the earliest wake-up of anyone asleep on the scene's clock (or of
	// anything the scene itself has scheduled), false when nothing is.
	Now  func() time.Time
	Next func() (time.Time, bool)
	// Earliest, when set, is the earliest wake-up itself, where Next may
	// round it up (a clock with a grain wakes together the sleepers due
	// within a tick): Elapse stops at Next only when Earliest is within
	// its span. Nil: Next.
	Earliest func() (time.Time, bool)
	// MoveTo moves the scene's time to t: its clock and whatever moves
	// with it (Redis's clock, first, so that a shop woken by the move
	// finds Redis already there).
	MoveTo func(t time.Time) error
	// Grace is how many more looks, 20 ms apart, Drive takes at a scene
	// at rest with nothing asleep before it calls it stuck: on a real
	// Redis a reply can be on its way in the kernel with its reader not
	// yet woken, which looks parked. 0 on the embedded server, where a
	// reply on its way is a goroutine at work.
	Grace int
	// Stuck describes a scene at rest with nothing asleep and nothing
	// left to do but wait: a Deadlocked *Stuck. Nil: the harness's own
	// description.
	Stuck func() *Stuck
	// H is the check's harness: its context stops a drive.
	H *H
}

// Drive lets the scene run until done holds. Whenever the process is at
// rest and done does not hold yet, it moves the clock to the next
// wake-up, or to the limit when that comes first. It gives up with
// ErrNoBound once the clock has moved limit (so done held within limit
// when it returns nil),
// and with a Deadlocked *Stuck when nothing sleeps on the clock and
// nothing moves: a visitor waits for something that will never come.
func (d Driver) Drive(done func() bool, limit time.Duration) error {
	start := d.Now()
	grace := 0
	for {
		if err := d.Rest(); err != nil {
			return err
		}
		if done() {
			return nil
		}
		if d.Now().Sub(start) >= limit {
			return ErrNoBound
		}
		next, ok := d.Next()
		if !ok {
			if grace >= d.Grace {
				return d.deadlocked()
			}
			grace++
			if err := d.pause(); err != nil {
				return err
			}
			continue
		}
		grace = 0
		if end := start.Add(limit); next.After(end) {
			// Nothing may be seen done past the limit: the clock goes to
			// the limit itself, where the next look gives up. (Moved to
			// the wake-up after it, a relay looking every 2 s emptied
			// the outbox "within a second" of a commit.)
			next = end
		}
		if err := d.MoveTo(next); err != nil {
			return err
		}
	}
}

// Elapse lets span pass on the scene's clock, waking each sleeper in turn
// and letting the scene come to rest after each, as Drive does, whether
// or not anyone sleeps. A query held at a gate stays held: this is the
// time a slow rebuild takes while the others wait. It returns with the
// scene at rest.
func (d Driver) Elapse(span time.Duration) error {
	if err := d.Rest(); err != nil {
		return err
	}
	woke, err := d.until(d.Now().Add(span))
	if err != nil || (!woke && d.Grace == 0) {
		// The last move woke nobody: no wake-up was due by its end, and
		// a scene at rest moves only when something wakes it, so it is
		// at rest still. (A look for rest after it was a fifth of case
		// 9's looks, and each is a snapshot of every goroutine.) Where
		// a reply can be on its way unseen (Grace: a real Redis), the
		// look after it is one more chance to see it land.
		return err
	}
	return d.Rest()
}

// Until moves the scene's time to end, stopping at each wake-up on the
// way to let the process come to rest; the last move, to end itself, it
// leaves to the caller to wait on. The process must be at rest when it is
// called: a driver that sends one read at a time (case 7's, compare's)
// calls it before each read, and a look for rest where nothing has moved
// would be most of its work.
func (d Driver) Until(end time.Time) error {
	_, err := d.until(end)
	return err
}

// until is Until, and reports whether its last move may have woken
// anyone: false when it let the process come to rest after its last
// wake-up and then moved the clock to end with nobody due by then.
func (d Driver) until(end time.Time) (woke bool, err error) {
	earliest := d.Earliest
	if earliest == nil {
		earliest = d.Next
	}
	for {
		at, ok := earliest()
		if !ok || at.After(end) {
			break
		}
		next, _ := d.Next()
		if err := d.MoveTo(next); err != nil {
			return true, err
		}
		if err := d.Rest(); err != nil {
			return true, err
		}
	}
	if end.After(d.Now()) {
		return false, d.MoveTo(end)
	}
	return false, nil
}

func (d Driver) deadlocked() error {
	if d.Stuck != nil {
		return d.Stuck()
	}
	return d.H.Stuck(Deadlocked, "waiting for something that never comes")
}

// pause waits the 20 ms between two looks of a Grace.
func (d Driver) pause() error {
	t := time.NewTimer(20 * time.Millisecond)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-d.H.Context().Done():
		return d.H.Context().Err()
	}
}
