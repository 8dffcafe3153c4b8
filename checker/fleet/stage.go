package fleet

import (
	"fmt"
	"strings"
	"time"

	"stampede/checker/check"
	"stampede/checker/harness"
	"stampede/checker/point"
	"stampede/checker/stack"
)

// Stage moves a scene's time: it waits for the process to come to rest,
// then moves Redis's clock and the shops' together to the next wake-up.
// The fleets of the Redis cases embed one.
type Stage struct {
	H     *harness.H
	World *World
	Clock *Clock
	// Keep are keys Drive and Elapse keep alive while they move the
	// clocks, as their live holder would: a holder that is slow, not dead.
	Keep []Key
	// Quick settles on one snapshot on a real server too, instead of
	// three in a row: for an explorer, which moves the clock hundreds of
	// times a scene.
	Quick bool
}

// ErrNoBound is what Drive returns when its condition still does not hold
// after its limit of the shops' time.
var ErrNoBound = harness.ErrNoBound

// Settle waits until every goroutine is parked: at a gate, on a lock, on a
// channel, held by a tap, asleep on the scene's clock, or reading a Redis
// subscription (see idle). Time does not move. It fails with a
// *harness.Stuck error after the hang bound.
//
// On the embedded server one snapshot decides (harness.Quiet): the
// connections are in-memory pipes, so a reply on its way is a goroutine at
// work, never one asleep in the kernel. On a real server a reply can sit in
// the kernel with its reader not yet woken, so Settle wants three
// snapshots in a row, a millisecond apart. Either way, at rest it lets a
// goroutine a schedule point holds go on (point.Release) and waits for
// rest again, and returns only when none is held.
func (s *Stage) Settle() error {
	if s.Quick || s.World.Embedded() {
		return s.H.Quiet(func() bool { return true })
	}
	deadline := time.Now().Add(s.H.Bound())
	last := time.Now().Add(harness.RestBounds * s.H.Bound())
	for streak := 0; streak < 3 || point.Release(); {
		if streak >= 3 {
			// At rest but for a goroutine a schedule point held: it has
			// been let go, and the process must come to rest again,
			// within a bound of its own. (One bound for every release
			// of a lockstep play, a thousand of them at three snapshots
			// each, called a right answer "still running" under load.)
			// Goroutines that wake each other for ever, each held in
			// turn, still meet the last bound.
			streak = 0
			deadline = time.Now().Add(s.H.Bound())
			if deadline.After(last) {
				deadline = last
			}
		}
		if Parked() {
			streak++
		} else {
			streak = 0
		}
		if time.Now().After(deadline) {
			return s.stuck(harness.Running, fmt.Sprintf("still running after %v", s.H.Bound()))
		}
		if err := s.H.Context().Err(); err != nil {
			return err
		}
		time.Sleep(time.Millisecond)
	}
	return nil
}

// Parked reports whether, in one snapshot, every goroutine but the
// caller's and the harness's watchdog's is parked or reads a Redis
// subscription.
func Parked() bool {
	gs := stack.All()
	for _, g := range gs[min(1, len(gs)):] { // the caller comes first
		if !g.Blocked() && !idle(g) && !harness.Watcher(g) {
			return false
		}
	}
	return true
}

// idle reports whether g waits for a message on a Redis subscription. On a
// real server that goroutine reads from the network ("IO wait"), which no
// other goroutine of the process can end; a message comes only when an
// instance publishes, with a command the checker sees. So it counts as
// parked. (On the embedded server it waits on a channel and is parked
// anyway.) A goroutine waiting for the reply to a command it sent is not
// idle: the reply is on its way.
func idle(g stack.Goroutine) bool { return g.State == "IO wait" && OnSubscription(g) }

// OnSubscription reports whether g runs go-redis's subscription code.
func OnSubscription(g stack.Goroutine) bool {
	for _, fr := range g.Frames {
		if strings.HasPrefix(fr.Func, "github.com/redis/go-redis/v9.(*PubSub).") ||
			strings.HasPrefix(fr.Func, "github.com/redis/go-redis/v9.(*channel).") {
			return true
		}
	}
	return false
}

// Subscribed reports whether a goroutine of the process reads a Redis
// subscription.
func Subscribed() bool {
	for _, g := range stack.All() {
		if OnSubscription(g) {
			return true
		}
	}
	return false
}

// Driver returns the harness's driver of the scene's time: rest is
// Settle, and a move of the clock moves Redis's first (see moveTo).
func (s *Stage) Driver() harness.Driver {
	d := harness.Driver{
		H:        s.H,
		Rest:     s.Settle,
		Now:      s.Clock.Now,
		Next:     s.Clock.Upcoming,
		Earliest: s.Clock.Earliest,
		MoveTo:   s.moveTo,
		Stuck:    func() *harness.Stuck { return s.stuck(harness.Deadlocked, "waiting for something that never comes") },
	}
	if !s.World.Embedded() {
		// On a real server a reply can be on its way in the kernel with
		// its reader not yet woken: look again, a few times.
		d.Grace = 5
	}
	return d
}

// Drive lets the scene run until done holds. Whenever every goroutine is
// parked and done does not hold yet, it moves the clocks to the next
// wake-up. It gives up with ErrNoBound once the clock has moved limit, and
// with a *harness.Stuck error when nothing sleeps on the clock and nothing
// moves: a visitor waits for something that will never come.
func (s *Stage) Drive(done func() bool, limit time.Duration) error {
	return s.Driver().Drive(done, limit)
}

// moveTo moves the clocks to next, Redis's first: the scene is at rest,
// so nothing reads Redis between the two moves, and every shop woken by
// the second finds Redis already at the new time. The other order lets a
// woken shop write a key that the move of Redis's clock then ages by the
// whole step: a lock of 2 s taken at the end of a 30 s step would be gone
// at once (seen on a loaded machine, as two rebuilds of one shelf at once
// under the reference solution of case 9).
func (s *Stage) moveTo(next time.Time) error {
	if err := s.World.Advance(s.H.Context(), next.Sub(s.Clock.Now()), s.Keep); err != nil {
		return err
	}
	s.Clock.Set(next)
	return nil
}

// Elapse lets d pass on the shops' clock, and in Redis with it, waking
// each sleeper in turn and letting the scene come to rest after each, as
// Drive does, whether or not anyone sleeps. A query held at a gate stays
// held: this is the time a slow rebuild takes while the others wait.
func (s *Stage) Elapse(d time.Duration) error { return s.Driver().Elapse(d) }

// stuck describes the process as the harness does, with its Places those
// of every goroutine in the shop's code, visitors or not: a fleet's flight
// may run on a goroutine of its own.
func (s *Stage) stuck(cause harness.Cause, why string) *harness.Stuck {
	st := s.H.Stuck(cause, why)
	st.Places = s.Places()
	if cause == harness.Deadlocked && s.lockLines() >= 2 {
		// The visitors wait on a flight; what holds it up is a fill's
		// goroutine and a visitor's, each waiting for the other's lock.
		st.Hint = harness.LockOrder
	}
	return st
}

// lockLines counts the shop's lines at which a goroutine waits for a lock.
func (s *Stage) lockLines() int {
	lines := map[string]bool{}
	for _, g := range stack.All() {
		if fr, ok := g.In(s.H.Dir()); ok && harness.LockWait(g.State) {
			lines[stack.Where(fr, check.Module)] = true
		}
	}
	return len(lines)
}

// Places says where the goroutines running the shop's code are waiting,
// visitors or not (a flight may run on a goroutine of its own), such as
// "1 goroutine at cases/case06/shop.go:80 in chan receive".
func (s *Stage) Places() []string {
	count := map[string]int{}
	var order []string
	for _, g := range stack.All() {
		fr, ok := g.In(s.H.Dir())
		if !ok {
			continue
		}
		place := "at " + stack.Where(fr, check.Module) + " in " + g.State
		if count[place] == 0 {
			order = append(order, place)
		}
		count[place]++
	}
	out := make([]string, len(order))
	for i, p := range order {
		noun := "goroutines"
		if count[p] == 1 {
			noun = "goroutine"
		}
		out[i] = fmt.Sprintf("%d %s %s", count[p], noun, p)
	}
	if len(out) == 0 {
		out = []string{"no goroutine is in the shop's code"}
	}
	return out
}

// AllDone reports whether every visitor of every crowd has returned.
func AllDone[T any](crowds []*harness.Crowd[T]) bool {
	for _, c := range crowds {
		if !c.Done() {
			return false
		}
	}
	return true
}

// OneAtATime returns run played with the shops' goroutines let go one at a
// time (harness.OneAtATime) on the embedded server, and run as it is on a
// real one. A check whose verdict on some wrong answer would otherwise be
// the machine's (an unguarded map that crashes only when two visitors
// write it together; a visitor that joins a flight or starts its own as
// the Go scheduler has it) then gives one verdict in every run.
//
// Not on a real server: a reply there can sit in the kernel, so each
// release waits for three snapshots a millisecond apart (Settle), and a
// burst of fifty visitors let go one at a time outlasts the hang bound;
// and the network's timing, not a schedule, orders what arrives, so the
// verdict could not be the schedule's anyway. A real server proves the
// right answers, which no schedule can fail.
func OneAtATime[N any](run func(h *harness.H, newShop N) check.Verdict) func(h *harness.H, newShop N) check.Verdict {
	turns := harness.OneAtATime(run)
	return func(h *harness.H, newShop N) check.Verdict {
		if ServerURL() != "" {
			return run(h, newShop)
		}
		return turns(h, newShop)
	}
}
