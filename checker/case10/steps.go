package case10

import (
	"errors"
	"fmt"
	"strings"

	"stampede/checker/check"
	"stampede/checker/fleet"
	"stampede/checker/harness"
)

// stepsInfo is the check that a write's invalidation, in however many
// commands, refuses a fill at every step.
var stepsInfo = check.Info{
	ID:   "invalidate-steps",
	Name: "a filler that read the old row before a write's commit cannot store it at any step of the write's invalidation",
	Catches: "a write path that deletes the price and the lease in two commands, the price first (a fill between " +
		"them is still under its lease), and one that ends the lease before its commit and deletes only the price " +
		"after it (a visitor who misses while the transaction is open takes a lease nothing ends)",
}

// InvalidateSteps checks that a write whose invalidation takes several
// Redis commands refuses, at each of them, a fill that read the row before
// the commit. A filler reads the old row and is held there (it came before
// the write began, or, in a second set of scenes, while the write's
// transaction was open). The write commits and is stopped before its k-th
// Redis command after the commit, for each k in turn (one scene each, and
// a last one where the write has finished); there the filler fills; then
// the write goes on, and a visitor on a new instance must get the committed
// price. It catches a write that deletes the price and the lease in two
// commands, price first, and one that ends the lease before its commit.
func InvalidateSteps(h *harness.H, newShop NewShop) check.Verdict {
	scenes := 0
	for _, inside := range []bool{false, true} {
		for k := 1; k <= maxCommands; k++ {
			v, more := invalidateStep(h, newShop, inside, k)
			scenes++
			if !v.Pass {
				return v
			}
			if !more {
				break
			}
		}
	}
	return check.Passed(fmt.Sprintf("a fill at every step of the write's invalidation, %s", fleet.Count(scenes, "scene")))
}

// invalidateStep is one scene of InvalidateSteps: the filler came before
// the write began or, when inside, while its transaction was open; the
// write is stopped before its k-th command after the commit. It reports
// false once the write sends fewer than k commands after its commit (that
// scene let it finish before the fill).
func invalidateStep(h *harness.H, newShop NewShop, inside bool, k int) (check.Verdict, bool) {
	s, err := newScene(h, newShop, 2, fleet.HoldCalls(1), fleet.HoldCalls(1))
	if err != nil {
		return fleet.Unreachable(err), false
	}
	defer s.Close()
	var r, w *harness.Crowd[int]
	when := "before the write began"
	arrived := s.Clock.Now()
	if !inside {
		r = s.Read(0)
		if err := s.Settle(); err != nil {
			return stuckVerdict(err), false
		}
		if s.reads.Calls() == 0 {
			return s.neverRead(), false
		}
		w = s.Write(1, newPrice)
		if err := s.Drive(func() bool { return s.commits.Calls() > 0 || w.Done() }, patience); err != nil {
			return waitVerdict(err, "shop-2's write, before its commit, was"), false
		}
	} else {
		when = "while the write's transaction was open"
		w = s.Write(1, newPrice)
		if err := s.Drive(func() bool { return s.commits.Calls() > 0 || w.Done() }, patience); err != nil {
			return waitVerdict(err, "shop-2's write, before its commit, was"), false
		}
		arrived = s.Clock.Now()
		r = s.Read(0)
		// The reader may wait for something the open write holds; give it
		// a read's time.
		err := s.Drive(func() bool { return s.reads.Calls() > 0 || r.Done() }, rebuild)
		if err != nil && !errors.Is(err, fleet.ErrNoBound) {
			return stuckVerdict(err), false
		}
	}
	read := s.reads.Calls() > 0
	if read {
		// The filler is slow, not dead: its lease must not age while it is held.
		if err := s.KeepAlive(); err != nil {
			return fleet.Unreachable(err), false
		}
	}
	before := s.Truth()
	since := len(s.taps[1].Log())
	stop := s.taps[1].Hold(fleet.Nth(k))
	defer stop.Release()
	s.commits.Gate(1).Open()
	if err := s.Drive(func() bool { return stop.Reached() || w.Done() }, patience); err != nil {
		return waitVerdict(err, "shop-2's write, after its commit, was"), false
	}
	stopped := stop.Reached()
	sent := s.sentAfter(1, since)
	if stopped {
		// The held command is in the log, but not sent yet.
		sent = sentBefore(s.taps[1].Log()[since:], k)
	}
	// The filler fills now, with the write stopped (or finished). It may
	// wait for something the write holds; give it a read's time.
	fill := len(s.taps[0].Log())
	s.reads.Gate(1).Open()
	if err := s.Drive(r.Done, rebuild); err != nil && !errors.Is(err, fleet.ErrNoBound) {
		return stuckVerdict(err), false
	}
	filled := s.sentAfter(0, fill)
	stop.Release()
	if err := s.Drive(func() bool { return w.Done() && r.Done() }, patience); err != nil {
		return waitVerdict(err, "the write and the filler were"), false
	}
	if v := wrote(w, "shop-2's write"); !v.Pass {
		return v, false
	}
	// A visitor who waited for the write may give up, past a read's time.
	if o := r.Outcomes()[0]; o.Err == nil || o.Panic != "" || s.Clock.Now().Sub(arrived) < rebuild {
		if v := gotOne(r, "shop-1's visitor", oldPrice, newPrice); !v.Pass {
			return v, false
		}
	}
	held := s.Cached()
	var what string
	switch {
	case !stopped:
		what = fmt.Sprintf("finished (it sent %s)", sent)
	case sent == "nothing":
		what = "was stopped before it sent anything to Redis"
	default:
		what = fmt.Sprintf("was stopped after it had sent %s", sent)
	}
	then := "; then the write went on"
	figure := fmt.Sprintf("a fill %s, the write stopped before its command %d after the commit", when, k)
	if !stopped {
		then = ""
		figure = fmt.Sprintf("a fill %s, after the write had finished", when)
	}
	came := fmt.Sprintf("missed %s and read the row (%s, version %d)", when, cents(before.Price), before.Version)
	if !read {
		came = fmt.Sprintf("came %s (and did not read the row then)", when)
	}
	v := s.served(figure, func(got int) string {
		return fmt.Sprintf("shop-1's visitor %s. Shop-2's write committed %s "+
			"and %s; there shop-1 filled (it sent: %s)%s. A visitor after that got "+
			"%s: the old price, for its whole time to live. Every step of the invalidation must leave a fill that "+
			"read before the commit refused: delete the price and end the lease in one command (DEL price lease), "+
			"after the commit and not before it, or end the lease first. Redis held: %s",
			came, cents(newPrice), what, filled, then, cents(got), held)
	})
	return v, v.Pass && stopped
}

// sentBefore lists the commands naming a key in log before the k-th such
// command, for a message.
func sentBefore(log []fleet.Command, k int) string {
	var sent []string
	for _, c := range log {
		if len(c.Keys) == 0 {
			continue
		}
		if len(sent) == k-1 {
			break
		}
		sent = append(sent, fleet.Shorten(c.String()))
	}
	if len(sent) == 0 {
		return "nothing"
	}
	return strings.Join(sent, " | ")
}
