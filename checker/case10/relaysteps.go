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
// old price for its whole time to live. Then, in the same world, the
// relay's k-th command fails once instead, for each k, with the old price
// cached and then with the filler (relayFailStep).
func relaySteps(h *harness.H, newShop NewShop) (check.Verdict, int) {
	scenes := 0
	steps := []func(k int) (check.Verdict, bool){
		func(k int) (check.Verdict, bool) { return relayStep(h, newShop, k) },
		func(k int) (check.Verdict, bool) { return relayFailStep(h, newShop, k, false) },
		func(k int) (check.Verdict, bool) { return relayFailStep(h, newShop, k, true) },
	}
	for _, step := range steps {
		for k := 1; k <= maxCommands; k++ {
			v, more := step(k)
			scenes++
			if !v.Pass {
				return v, scenes
			}
			if !more {
				break
			}
		}
	}
	return check.Passed(""), scenes
}

// relayStep is one scene of relaySteps, the relay stopped before its k-th
// command. It reports false once the relay sends fewer than k commands
// (that scene let it finish before the fill).
func relayStep(h *harness.H, newShop NewShop, k int) (check.Verdict, bool) {
	s, r, filler, done, v := relayOnly(h, newShop, true)
	defer done()
	if !v.Pass {
		return v, false
	}
	since := len(s.taps[2].Log())
	stop := s.taps[2].Hold(fleet.Nth(k))
	defer stop.Release()
	s.Write(0, newPrice)
	if err := s.Drive(func() bool { return s.Truth().Price == newPrice }, patience); err != nil {
		return waitVerdict(err, "shop-1's write was"), false
	}
	err := s.Drive(func() bool { return stop.Reached() || len(s.db.Unsent()) == 0 || !r.early().Pass }, relayWithin)
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
	sentAll, v := s.awaitOutbox(r, relayWithin)
	if !v.Pass {
		return v, false
	}
	if !sentAll {
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

// relayOnly starts the world of relaySteps's scenes: three instances, only
// shop-3 running its relay, shop-1 cut off from Redis at its commit (from
// the commit hook on: its write's own delete never arrives); and either
// shop-2's filler, which missed, took its lease and read the old row, held
// there (filler), or the old price cached. done undoes it all (call it
// even when v fails).
func relayOnly(h *harness.H, newShop NewShop, filler bool) (s *scene, r *relays, f *harness.Crowd[int], done func(), v check.Verdict) {
	var undo []func()
	done = func() {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
	}
	reads := fleet.HoldCalls()
	if filler {
		reads = fleet.HoldCalls(1)
	}
	s, err := newScene(h, newShop, 3, reads, fleet.HoldCalls())
	if err != nil {
		return nil, nil, nil, done, fleet.Unreachable(err)
	}
	undo = append(undo, s.Close)
	if filler {
		f = s.Read(1)
		if err := s.Drive(func() bool { return s.reads.Calls() > 0 || f.Done() }, patience); err != nil {
			return s, nil, f, done, waitVerdict(err, "shop-2's visitor, with Redis empty, was")
		}
		if s.reads.Calls() == 0 {
			return s, nil, f, done, check.Failed("", "shop-2's visitor, with Redis empty, never read the row")
		}
		// The filler is slow, not dead: its lease must not age while it is held.
		if err := s.KeepAlive(); err != nil {
			return s, nil, f, done, fleet.Unreachable(err)
		}
	} else if v := s.warm(1); !v.Pass {
		return s, nil, nil, done, v
	}
	r, v = s.startRelays(2)
	if !v.Pass {
		return s, nil, f, done, v
	}
	undo = append(undo, r.stop)
	var resume atomic.Pointer[func()]
	undo = append(undo, func() { call(&resume) })
	var armed atomic.Bool
	s.commits.Then = func(context.Context, string) error {
		if armed.CompareAndSwap(false, true) {
			r := s.taps[0].Pause() // nothing shop-1 sends from now on reaches Redis
			resume.Store(&r)
		}
		return nil
	}
	return s, r, f, done, check.Passed("")
}

// relayFailStep is a scene of relaySteps on a failing Redis: shop-3's
// relay's k-th command naming a key fails once, as a dropped connection
// does, with the old price cached or with shop-2's filler holding the old
// row (filler), let fill only once the outbox is empty. Within retryWithin
// the row must be sent, and a visitor after must get the committed price.
// It reports false once the relay sends fewer than k commands. It catches
// a relay that marks the row sent between its commands (the lease
// deleted, the row marked, then the price's delete failing leaves the old
// price), and one that does not look at a command's error (a failed
// delete of the lease lets the filler store the old price).
func relayFailStep(h *harness.H, newShop NewShop, k int, filler bool) (check.Verdict, bool) {
	s, r, f, done, v := relayOnly(h, newShop, filler)
	defer done()
	if !v.Pass {
		return v, false
	}
	s.taps[2].Fail(fleet.Nth(k), errRedis, 1)
	s.Write(0, newPrice)
	if err := s.Drive(func() bool { return s.Truth().Price == newPrice }, patience); err != nil {
		return waitVerdict(err, "shop-1's write was"), false
	}
	sent, v := s.awaitOutbox(r, retryWithin)
	if !v.Pass {
		return v, false
	}
	failed := failedCommand(s.taps[2])
	if failed == "none was sent" {
		return check.Passed(""), false
	}
	scene := "the old price cached"
	if filler {
		scene = fmt.Sprintf("shop-2's filler holding the row it read (%s) before the commit", cents(oldPrice))
	}
	if !sent {
		return check.Failed("", fmt.Sprintf("shop-1 committed %s and was cut off from Redis at once, with %s; "+
			"shop-3's relay's command %d (%s) failed once, as a dropped connection; %v later the outbox still "+
			"held the write's invalidation: a failed delete is tried again on a later look, with the row left "+
			"unsent. Redis held: %s", cents(newPrice), scene, k, failed, retryWithin, s.Cached())), false
	}
	if filler {
		s.reads.Gate(1).Open()
		if err := s.Drive(f.Done, patience); err != nil {
			return waitVerdict(err, "shop-2's filler, let go after the relay, was"), false
		}
	}
	held := s.Cached()
	v = s.served("", func(got int) string {
		return fmt.Sprintf("shop-1 committed %s and was cut off from Redis at once, with %s; shop-3's relay's "+
			"command %d (%s) failed once, as a dropped connection, and the row was marked sent all the same; a "+
			"visitor after that got %s: the old price, for its whole time to live. Mark a row sent only once "+
			"every command of its invalidation has succeeded, and look at each command's error. Redis held: %s",
			cents(newPrice), scene, k, failed, cents(got), held)
	})
	return v, v.Pass
}
