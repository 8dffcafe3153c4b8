package case08

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"stampede/checker/check"
	"stampede/checker/fleet"
	"stampede/checker/harness"
	"stampede/shop/clock"
	"stampede/shop/events"
)

// openWorld opens the case's Redis on the server at url ("": the embedded
// one). On a real server its clock runs: the checks time each key
// themselves, from its write and its reading (see lifetimes). Every
// client has a wide pool: a cold start sends hundreds of commands at once.
func openWorld(ctx context.Context, url string) (*fleet.World, error) {
	return fleet.Open(ctx, url, fleet.RealTime(), fleet.Pool(64))
}

// nine is the moment every scene's clock starts at.
var nine = time.Date(2025, time.March, 3, 9, 0, 0, 0, time.UTC)

// scene is one check's world: the shop, its database, its Redis and the
// checker's clock. The shop's clock is a clock.Fake that only the scene
// moves, and only when the process is at rest (see Drive), so that every
// wait the shop sets on it ends when the scene says, whatever the load.
type scene struct {
	h     *harness.H
	world *fleet.World
	tap   *fleet.Tap
	db    *events.DB
	clk   *clock.Fake
	shop  Shop
	gate  *harness.Gate // holds every query, when the scene was made with one
	start time.Time     // on the checker's clock, for keys the tap did not see written

	crowds []*harness.Crowd[string]
}

// newScene makes a shop on a fresh world, with every query held at a gate
// when hold is set.
func newScene(h *harness.H, newShop NewShop, hold bool) (*scene, error) {
	var hook sceneHook
	if hold {
		hook = func(s *scene, ctx context.Context, _ int) error { return s.gate.Wait(ctx) }
	}
	return newSceneWith(h, newShop, hold, hook, nil)
}

// sceneHook is a scene's database hook: it runs at the start of every
// query, with the scene, as events.Hook does.
type sceneHook func(s *scene, ctx context.Context, id int) error

// newSceneWith makes a shop on a fresh world whose database runs hook at
// the start of every query (when it is not nil) and whose tap shows every
// command to stage (when it is not nil; see tap.stage). With gate set the
// scene has a closed gate for the hook to hold queries at, opened by Close.
func newSceneWith(h *harness.H, newShop NewShop, gate bool, hook sceneHook,
	stage func(ctx context.Context, cmd redis.Cmder, answered bool)) (*scene, error) {
	t := fleet.NewTap(nil)
	if stage != nil {
		t.Stage(stage)
	}
	return newSceneOn(h, newShop, t, gate, hook)
}

// newSceneOn is newSceneWith with a tap of the caller's, whose stage and
// faults are set before the shop is made.
func newSceneOn(h *harness.H, newShop NewShop, t *fleet.Tap, gate bool, hook sceneHook) (*scene, error) {
	w, err := openWorld(h.Context(), fleet.ServerURL())
	if err != nil {
		return nil, err
	}
	s := &scene{h: h, world: w, tap: t, clk: clock.NewFake(nine), start: time.Now()}
	opts := []events.Option{events.WithCost(0), events.WithClock(s.clk)}
	if gate {
		s.gate = harness.NewGate()
	}
	if hook != nil {
		opts = append(opts, events.WithHook(func(ctx context.Context, id int) error { return hook(s, ctx, id) }))
	}
	s.db = events.New(opts...)
	s.shop = newShop(s.db, w.Client(s.tap), s.clk)
	return s, nil
}

// Close opens the gate, lets the readers still inside the shop finish, so
// that nothing writes to Redis after it, and closes the world.
func (s *scene) Close() {
	if s.gate != nil {
		s.gate.Open()
	}
	_ = s.Drive(func() bool { return allDone(s.crowds) }, patience)
	s.world.Close()
}

// read starts one reader per entry of ids, each with a context of its own,
// and returns once each has started.
func (s *scene) read(ids []int) *harness.Crowd[string] {
	return s.visit(len(ids), func(ctx context.Context, i int) (string, error) {
		return s.shop.Page(ctx, ids[i])
	})
}

// warm runs the shop's warm-up of ids, as one visitor.
func (s *scene) warm(ids []int) *harness.Crowd[string] {
	return s.visit(1, func(ctx context.Context, _ int) (string, error) {
		return "", s.shop.WarmUp(ctx, ids)
	})
}

// visit starts a crowd and waits until every visitor has started.
func (s *scene) visit(n int, fn func(context.Context, int) (string, error)) *harness.Crowd[string] {
	c := harness.Visit(s.h, n, fn).Started()
	s.crowds = append(s.crowds, c)
	return c
}

// rest waits until every goroutine but the caller's is parked: on a lock,
// a channel, the gate, or asleep on the scene's clock. On a real server a
// goroutine waiting for Redis's answer is not parked, and is waited for.
// It fails with a *harness.Stuck error when the shop has neither come to
// rest nor had a Redis command answered for the hang bound (a warm-up of
// 2,000 round trips to a real server on a loaded machine takes longer than
// that, and is moving all the while), or after twelve times the bound in
// all.
func (s *scene) rest() error {
	now := time.Now()
	deadline, last := now.Add(s.h.Bound()), now.Add(12*s.h.Bound())
	_, seen := s.tap.InFlight()
	// A snapshot stops the world to take every goroutine's stack: take one
	// only when the scheduler's counts let the process be at rest. Under a
	// schedule the counts let the held goroutines go, one per look (a
	// snapshot at each of a lockstep's 400 turns was most of at-most).
	var look harness.Lookout
	for {
		if sent, _ := s.tap.InFlight(); sent == 0 && look.Due() {
			switch s.h.Look(&look) {
			case harness.LetGo:
				// At rest but for a goroutine a schedule point held (a
				// check played one at a time): it goes on now, and the
				// process must come to rest again.
				look = harness.Lookout{}
				continue
			case harness.AtRest:
				return nil
			}
		}
		if err := s.h.Context().Err(); err != nil {
			return err
		}
		now := time.Now()
		if _, n := s.tap.InFlight(); n != seen {
			seen, deadline = n, now.Add(s.h.Bound())
		}
		if now.After(deadline) || now.After(last) {
			return blockedStuck(s.h, harness.Running, fmt.Sprintf("still running after %v", s.h.Bound()))
		}
		time.Sleep(50 * time.Microsecond)
	}
}

// blockedStuck is the harness's Stuck of the process as it is now, its
// places the readers waiting in the shop's own lines.
func blockedStuck(h *harness.H, cause harness.Cause, why string) *harness.Stuck {
	st := h.Stuck(cause, why)
	st.Places = []string{h.Blocked()}
	return st
}

// errNoBound is what Drive returns when readers still wait after its limit.
var errNoBound = harness.ErrNoBound

// driver is the harness's driver of the scene's time: rest is the
// scene's, and a move sets the shop's clock (Redis keeps its own time).
func (s *scene) driver() harness.Driver {
	d := harness.Driver{
		H:      s.h,
		Rest:   s.rest,
		Now:    s.clk.Now,
		Next:   s.clk.Next,
		MoveTo: func(t time.Time) error { s.clk.Set(t); return nil },
		Stuck: func() *harness.Stuck {
			return blockedStuck(s.h, harness.Deadlocked, "waiting for something that never comes")
		},
	}
	if !s.world.Embedded() {
		d.Grace = 5 // an answer can be on its way in the kernel, its reader not yet woken
	}
	return d
}

// Drive lets the shop run until done holds. Whenever the process is at
// rest and done does not hold yet, it moves the clock to the next wake-up.
// It gives up with errNoBound once the clock has moved limit, and with a
// *harness.Stuck error when nothing sleeps on the clock and nothing moves.
func (s *scene) Drive(done func() bool, limit time.Duration) error {
	return s.driver().Drive(done, limit)
}

// Elapse lets d pass on the shop's clock, waking each sleeper in turn and
// letting the process come to rest after each. A query held at the gate
// stays held.
func (s *scene) Elapse(d time.Duration) error { return s.driver().Elapse(d) }

func allDone(crowds []*harness.Crowd[string]) bool {
	for _, c := range crowds {
		if !c.Done() {
			return false
		}
	}
	return true
}

// returned counts a crowd's visitors who have returned.
func returned(c *harness.Crowd[string]) int {
	n := 0
	for _, o := range c.Outcomes() {
		if o.Returned {
			n++
		}
	}
	return n
}

// waitVerdict fails a check whose readers did not finish.
func waitVerdict(err error, who string) check.Verdict {
	if errors.Is(err, errNoBound) {
		return check.Failed("", fmt.Sprintf("%s still waiting after %v of the shop's clock", who, patience))
	}
	return stuckVerdict(err)
}

// stuckVerdict fails a check whose readers never came to rest or never
// returned.
func stuckVerdict(err error) check.Verdict {
	msg := "the readers never finished: " + err.Error()
	if strings.Contains(msg, " in sleep") || strings.Contains(msg, " in select") || strings.Contains(msg, "never comes") {
		msg += " (wait with the clock New is given: clk.Sleep, or clock.WithTimeout(ctx, clk, d); not time.Sleep, " +
			"time.After or context.WithTimeout: the checker moves that clock by hand)"
	}
	return check.Failed("", msg)
}

// count says "1 query" or "3 queries".
func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
