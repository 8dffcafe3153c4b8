package case10

import (
	"context"
	"errors"
	"fmt"
	"strings"
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

// detached is which work stalledDetached stalls.
type detached int

const (
	writeDelete detached = iota // the write's delete, its visitor gone at the commit
	readFailed                  // letting the lease go after the filler's read failed
	visitorGone                 // letting the lease go after the filler's visitor left
)

// what says which work it is, for a message.
func (d detached) what() string {
	switch d {
	case writeDelete:
		return "the delete after the commit of a writer who left"
	case readFailed:
		return "a let-go after a failed read"
	default:
		return "a let-go after the visitor left"
	}
}

// stalledDetached plays stalledDetachedAt for each of the work's commands
// naming a key in turn, and says what it did.
func stalledDetached(h *harness.H, newShop NewShop, kinds ...detached) check.Verdict {
	var played []string
	for _, kind := range kinds {
		n := 0
		for k := 1; k <= maxCommands; k++ {
			v, reached := stalledDetachedAt(h, newShop, kind, k)
			if !v.Pass {
				return v
			}
			if !reached {
				break
			}
			n++
		}
		if n == 0 {
			played = append(played, "not staged: the shop sent Redis nothing that names a key for "+kind.what())
			continue
		}
		stalled := "its one command stalled"
		if n > 1 {
			stalled = fmt.Sprintf("each of its %d commands stalled in turn", n)
		}
		played = append(played, fmt.Sprintf("%s, %s, was given up within %v", kind.what(), stalled, detachedWithin))
	}
	return check.Passed(strings.Join(played, "; "))
}

// stalledDetachedAt is a scene of WriterLeaves (writeDelete) and of LetGo:
// work that goes on after its visitor meets a Redis command that stalls on
// the network. The writer's visitor hangs up as the commit returns; or the
// filler's read of the row fails; or its visitor leaves while it reads.
// From that moment shop-1's k-th command naming a key (the delete after
// the commit; letting the lease go) is held on its way until the context
// it was sent on ends, as in a network's black hole. Within detachedWithin
// of the shops' clock the visitor must have returned and nothing of the
// shop's may still be running: detached work has a deadline of its own,
// on each of its commands. It reports whether the k-th command came. It
// catches a delete or a let-go on context.WithoutCancel with no deadline,
// on any of its paths or commands, which holds a goroutine and a
// connection of the pool for as long as the network does.
func stalledDetachedAt(h *harness.H, newShop NewShop, kind detached, k int) (check.Verdict, bool) {
	var stop atomic.Pointer[fleet.Hold]
	defer func() {
		if hold := stop.Load(); hold != nil {
			hold.Release()
		}
	}()
	var s *scene
	arm := func() {
		stop.CompareAndSwap(nil, s.taps[0].HoldUntilDone(fleet.Nth(k)))
	}
	reads := fleet.HoldCalls()
	switch kind {
	case readFailed:
		reads.Then = func(context.Context, string) error {
			arm()
			return errDown
		}
	case visitorGone:
		reads = fleet.HoldCalls(1)
	}
	s, err := newScene(h, newShop, 2, reads, fleet.HoldCalls())
	if err != nil {
		return fleet.Unreachable(err), false
	}
	defer s.Close()
	var c *harness.Crowd[int]
	who := "shop-1's visitor, whose read failed,"
	switch kind {
	case writeDelete:
		if v := s.warm(1); !v.Pass {
			return v, false
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
		who = "shop-1's write, whose visitor hung up at the commit,"
	case readFailed:
		c = s.Read(0)
	case visitorGone:
		var leave context.CancelFunc
		c, leave = s.ReadLeaving(0)
		if err := s.Drive(func() bool { return s.reads.Calls() > 0 || c.Done() }, patience); err != nil {
			return waitVerdict(err, "shop-1's visitor, with Redis empty, was"), false
		}
		if s.reads.Calls() == 0 {
			return s.neverRead(), false
		}
		arm()
		leave()
		who = "shop-1's filler, whose visitor left while it read,"
	}
	start := s.Clock.Now()
	// A visitor that never returns is judged below, with what holds it.
	var stuck *harness.Stuck
	if err := s.Drive(c.Done, detachedWithin); errors.As(err, &stuck) && stuck.Cause == harness.Running {
		return stuckVerdict(err), false
	}
	if left := detachedWithin - s.Clock.Now().Sub(start); left > 0 {
		if err := s.Elapse(left); err != nil {
			return stuckVerdict(err), false
		}
	}
	hold := stop.Load()
	if hold == nil || !hold.Reached() {
		if kind == writeDelete && s.Truth().Price != newPrice {
			return check.Skipped("not staged: shop-1's write did not commit"), false
		}
		return check.Passed(""), false
	}
	if o := c.Outcomes(); len(o) > 0 && o[0].Panic != "" {
		return check.Failed("", who+" panicked: "+o[0].Panic), true
	}
	n, where := s.shopGoroutines()
	if c.Done() && n == 0 {
		return check.Passed(""), true
	}
	state := "had returned, but"
	if !c.Done() {
		state = "had not returned, and"
	}
	return check.Failed(fmt.Sprintf("still waiting after %v", detachedWithin), fmt.Sprintf("%s sent %s, which stalled on "+
		"its way to Redis (held until the context it was sent on ended, as in a network's black hole). %v later it %s "+
		"%s in the shop's code still waited: work that outlives its visitor needs a deadline of its own, on the clock "+
		"New is given (clock.WithTimeout on context.WithoutCancel), a few seconds at most, for each of its commands, "+
		"or a stalled network holds a goroutine and a connection of the pool for good. Where they wait: %s", who,
		fleet.Shorten(hold.Held()), detachedWithin, state, fleet.Count(n, "goroutine"), where)), true
}
