package case10

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"stampede/checker/check"
	"stampede/checker/fleet"
	"stampede/checker/harness"
)

// detachedWithin is how long work that outlives its visitor (a write's
// delete after the commit, a filler letting its lease go) may wait for a
// Redis command that stalls on its way: the contract's longest lease.
const detachedWithin = 10 * time.Second

// stalledDetached is a scene of WriterLeaves (write) and of LetGo: work
// that goes on after its visitor meets a Redis command that stalls on the
// network. In the first, the writer's visitor hangs up as the commit
// returns; in the second, the filler's read of the row fails. From that
// moment shop-1's first command naming a key (the delete after the
// commit; letting the lease go) is held on its way until the context it
// was sent on ends, as in a network's black hole. Within detachedWithin of
// the shops' clock the visitor must have returned and nothing of the
// shop's may still be running: detached work has a deadline of its own.
// It catches a delete or a let-go on context.WithoutCancel with no
// deadline, which holds a goroutine and a connection of the pool for as
// long as the network does.
func stalledDetached(h *harness.H, newShop NewShop, write bool) check.Verdict {
	var stop atomic.Pointer[fleet.Hold]
	defer func() {
		if hold := stop.Load(); hold != nil {
			hold.Release()
		}
	}()
	var s *scene
	arm := func() {
		stop.CompareAndSwap(nil, s.taps[0].HoldUntilDone(func(c fleet.Command) bool { return c.Keyed() }))
	}
	reads := fleet.HoldCalls()
	if !write {
		reads.Then = func(context.Context, string) error {
			arm()
			return errDown
		}
	}
	s, err := newScene(h, newShop, 2, reads, fleet.HoldCalls())
	if err != nil {
		return fleet.Unreachable(err)
	}
	defer s.Close()
	var c *harness.Crowd[int]
	what, who := "a let-go after a failed read", "shop-1's visitor, whose read failed,"
	if write {
		if v := s.warm(1); !v.Pass {
			return v
		}
		var leave atomic.Pointer[func()]
		s.commits.Then = func(context.Context, string) error {
			arm()
			if end := leave.Load(); end != nil {
				(*end)() // the client hangs up; the transaction commits all the same
			}
			return nil
		}
		shop := s.shops[0]
		c = s.visit(1, func(ctx context.Context) (int, error) {
			ctx, cancel := context.WithCancel(ctx)
			defer cancel()
			end := func() { cancel() }
			leave.Store(&end)
			return newPrice, shop.SetPrice(ctx, book, newPrice)
		})
		what, who = "the delete after the commit of a writer who left", "shop-1's write, whose visitor hung up at the commit,"
	} else {
		c = s.Read(0)
	}
	start := s.Clock.Now()
	// A visitor that never returns is judged below, with what holds it.
	var stuck *harness.Stuck
	if err := s.Drive(c.Done, detachedWithin); errors.As(err, &stuck) && stuck.Cause == harness.Running {
		return stuckVerdict(err)
	}
	if left := detachedWithin - s.Clock.Now().Sub(start); left > 0 {
		if err := s.Elapse(left); err != nil {
			return stuckVerdict(err)
		}
	}
	hold := stop.Load()
	if hold == nil || !hold.Reached() {
		if write && s.Truth().Price != newPrice {
			return check.Skipped("not staged: shop-1's write did not commit")
		}
		return check.Passed("not staged: the shop sent Redis nothing that names a key for " + what)
	}
	if o := c.Outcomes(); len(o) > 0 && o[0].Panic != "" {
		return check.Failed("", who+" panicked: "+o[0].Panic)
	}
	n, where := s.shopGoroutines()
	if c.Done() && n == 0 {
		return check.Passed(fmt.Sprintf("%s stalled on its way, and was given up within %v", what, detachedWithin))
	}
	state := "had returned, but"
	if !c.Done() {
		state = "had not returned, and"
	}
	return check.Failed(fmt.Sprintf("still waiting after %v", detachedWithin), fmt.Sprintf("%s sent %s, which stalled on "+
		"its way to Redis (held until the context it was sent on ended, as in a network's black hole). %v later it %s "+
		"%s in the shop's code still waited: work that outlives its visitor needs a deadline of its own, on the clock "+
		"New is given (clock.WithTimeout on context.WithoutCancel), a few seconds at most, or a stalled network holds "+
		"a goroutine and a connection of the pool for good. Where they wait: %s", who, fleet.Shorten(hold.Held()),
		detachedWithin, state, fleet.Count(n, "goroutine"), where))
}
