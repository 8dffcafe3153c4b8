package case10

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"stampede/checker/check"
	"stampede/checker/fleet"
	"stampede/checker/harness"
)

// relaySteps is a set of Outbox's scenes: the relay's invalidation, like
// the write's (InvalidateSteps), must refuse at each of its steps a fill
// that read the row before the commit. Shop-2's filler misses, takes its
// lease and reads the old row, held there; shop-1's write commits and is
// cut off from Redis at once, as an instance that dies after its commit;
// only shop-3 runs its relay, which is stopped before its k-th command
// naming a key, for each k in turn (one scene each, and a last one where
// the relay has sent them all). There the filler fills; then the relay
// goes on, and a visitor after it must get the committed price. It
// catches a relay that deletes the price and then the lease in two
// commands: a fill between them is still under its lease, and stores the
// old price for its whole time to live.
func relaySteps(h *harness.H, newShop NewShop) (check.Verdict, int) {
	scenes := 0
	for k := 1; k <= maxCommands; k++ {
		v, more := relayStep(h, newShop, k)
		scenes++
		if !v.Pass || !more {
			return v, scenes
		}
	}
	return check.Passed(""), scenes
}

// relayStep is one scene of relaySteps, the relay stopped before its k-th
// command. It reports false once the relay sends fewer than k commands
// (that scene let it finish before the fill).
func relayStep(h *harness.H, newShop NewShop, k int) (check.Verdict, bool) {
	s, err := newScene(h, newShop, 3, fleet.HoldCalls(1), fleet.HoldCalls())
	if err != nil {
		return fleet.Unreachable(err), false
	}
	defer s.Close()
	filler := s.Read(1)
	if err := s.Drive(func() bool { return s.reads.Calls() > 0 || filler.Done() }, patience); err != nil {
		return waitVerdict(err, "shop-2's visitor, with Redis empty, was"), false
	}
	if s.reads.Calls() == 0 {
		return check.Failed("", "shop-2's visitor, with Redis empty, never read the row"), false
	}
	// The filler is slow, not dead: its lease must not age while it is held.
	if err := s.KeepAlive(); err != nil {
		return fleet.Unreachable(err), false
	}
	r, v := s.startRelays(2)
	if !v.Pass {
		return v, false
	}
	defer r.stop()
	var resume atomic.Pointer[func()]
	defer call(&resume)
	var armed atomic.Bool
	s.commits.Then = func(context.Context, string) error {
		if armed.CompareAndSwap(false, true) {
			r := s.taps[0].Pause() // nothing shop-1 sends from now on reaches Redis
			resume.Store(&r)
		}
		return nil
	}
	since := len(s.taps[2].Log())
	stop := s.taps[2].Hold(fleet.Nth(k))
	defer stop.Release()
	s.Write(0, newPrice)
	if err := s.Drive(func() bool { return s.Truth().Price == newPrice }, patience); err != nil {
		return waitVerdict(err, "shop-1's write was"), false
	}
	err = s.Drive(func() bool { return stop.Reached() || len(s.db.Unsent()) == 0 || !r.early().Pass }, relayWithin)
	if v := r.early(); !v.Pass {
		return v, false
	}
	var stuck *harness.Stuck
	if errors.As(err, &stuck) && stuck.Cause == harness.Running {
		return stuckVerdict(err), false
	}
	stopped := stop.Reached()
	if !stopped && len(s.db.Unsent()) > 0 {
		return check.Failed("", fmt.Sprintf("shop-1 committed %s and was cut off from Redis at once, as an instance "+
			"that dies after its commit; %v later shop-3's relay had sent nothing, and the outbox still held the "+
			"write's invalidation. Redis held: %s", cents(newPrice), relayWithin, s.Cached())), false
	}
	sent := s.sentAfter(2, since)
	if stopped {
		// The held command is in the log, but not sent yet.
		sent = sentBefore(s.taps[2].Log()[since:], k)
	}
	// The filler fills now, with the relay stopped (or finished). It may
	// wait for something the relay holds; give it a read's time.
	fill := len(s.taps[1].Log())
	s.reads.Gate(1).Open()
	if err := s.Drive(filler.Done, rebuild); err != nil && !errors.Is(err, fleet.ErrNoBound) {
		return stuckVerdict(err), false
	}
	filled := s.sentAfter(1, fill)
	stop.Release()
	done, v := s.awaitOutbox(r, relayWithin)
	if !v.Pass {
		return v, false
	}
	if !done {
		return check.Failed("", fmt.Sprintf("shop-1 committed %s and was cut off from Redis at once; shop-3's "+
			"relay, stopped before its command %d and then let go, had not marked the row sent %v after "+
			"that. Redis held: %s", cents(newPrice), k, relayWithin, s.Cached())), false
	}
	if err := s.Drive(filler.Done, patience); err != nil {
		return waitVerdict(err, "shop-2's filler was"), false
	}
	what := fmt.Sprintf("was stopped after it had sent %s", sent)
	switch {
	case !stopped:
		what = fmt.Sprintf("finished first (it sent %s)", sent)
	case sent == "nothing":
		what = "was stopped before it sent anything to Redis"
	}
	held := s.Cached()
	v = s.served("", func(got int) string {
		return fmt.Sprintf("shop-2's visitor missed and read the row (%s) before shop-1's write committed %s; "+
			"shop-1 was cut off from Redis at its commit, as an instance that dies there, and shop-3's relay %s; "+
			"there shop-2 filled (it sent: %s), and then the relay went on. A visitor after that got %s: the old "+
			"price, for its whole time to live. The relay's invalidation, like the write's, must leave a fill that "+
			"read before the commit refused at every step: delete the price and end the lease in one command (DEL "+
			"price lease), or end the lease first. Redis held: %s",
			cents(oldPrice), cents(newPrice), what, filled, cents(got), held)
	})
	return v, v.Pass && stopped
}
