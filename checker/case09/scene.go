package case09

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/redis/go-redis/v9"

	"stampede/checker/case06"
	"stampede/checker/check"
	"stampede/checker/fleet"
	"stampede/checker/harness"
	"stampede/checker/shelves"
	"stampede/shop/catalog"
	"stampede/shop/clock"
)

// scene is one check's fleet of case 9 shops, on case 6's fleet (its
// world, its clock, its settling), with a database whose queries the
// checker can hold at a gate or make fail.
type scene struct {
	*case06.Fleet
	shops []Shop
	db    *case06.Plan
	// stalls hold an instance's commands on their way to Redis, one per
	// instance, in the order of shops.
	stalls []*stall
	// filled is when the first fill landed, on the shops' clock: the
	// scenes count their times from it.
	filled time.Time
}

// newScene starts n instances of a shop.
func newScene(h *harness.H, newShop NewShop, n int) (*scene, error) {
	return newSceneSkewed(h, newShop, make([]time.Duration, n))
}

// newSceneSkewed starts one instance per offset, and then steps instance
// i's clock offsets[i] off the scene's (fleet.Clock's Steppable): what it
// tells is off from then on, and it sleeps on the scene's clock like any
// other. The step comes after New, so that code which measured its offset
// to another clock once, at startup, is off too.
func newSceneSkewed(h *harness.H, newShop NewShop, offsets []time.Duration) (*scene, error) {
	n := len(offsets)
	skewed := slices.ContainsFunc(offsets, func(d time.Duration) bool { return d != 0 })
	var clocks []*fleet.SteppedClock
	sc := &scene{db: case06.NewPlan()}
	mk := func(db *catalog.DB, rdb *redis.Client, clk clock.Clock) shelves.Shop {
		if skewed {
			stepped := clk.(*fleet.Clock).Steppable()
			clocks = append(clocks, stepped)
			clk = stepped
		}
		st := &stall{}
		rdb.AddHook(st)
		sc.stalls = append(sc.stalls, st)
		s := newShop(db, rdb, clk)
		sc.shops = append(sc.shops, s)
		return s
	}
	f, err := case06.NewFleet(h, fleet.ServerURL(), mk, n, 0, sc.db.Hook)
	if err != nil {
		return nil, err
	}
	sc.Fleet = f
	sc.db.SetClock(f.Clock)
	for i, c := range clocks {
		c.Step(offsets[i])
	}
	return sc, nil
}

// Close lets every held query and command go, lets the visitors finish,
// and closes the world.
func (sc *scene) Close() {
	sc.db.Open()
	for _, st := range sc.stalls {
		st.releaseAll()
	}
	sc.Fleet.Close()
}

// visit starts n visitors of one instance. Each visitor's context ends when
// the visitor leaves, as a request's does when its handler returns.
func (sc *scene) visit(instance, n int) *harness.Crowd[[]string] {
	return sc.VisitWith(n, func(ctx context.Context, _ int) ([]string, error) {
		ctx, leave := context.WithCancel(ctx)
		defer leave()
		return sc.shops[instance].Top(ctx, catalog.Bestsellers)
	})
}

// burst starts perInstance visitors on every instance.
func (sc *scene) burst(perInstance int) *harness.Crowd[[]string] {
	n := len(sc.shops)
	return sc.VisitWith(n*perInstance, func(ctx context.Context, i int) ([]string, error) {
		ctx, leave := context.WithCancel(ctx)
		defer leave()
		return sc.shops[i%n].Top(ctx, catalog.Bestsellers)
	})
}

// visitShelf starts n visitors of one instance, all asking for shelf.
func (sc *scene) visitShelf(instance int, shelf string, n int) *harness.Crowd[[]string] {
	return sc.VisitWith(n, func(ctx context.Context, _ int) ([]string, error) {
		ctx, leave := context.WithCancel(ctx)
		defer leave()
		return sc.shops[instance].Top(ctx, shelf)
	})
}

// fill has one visitor of shop-1 fill the shelf, with the database open,
// and notes when.
func (sc *scene) fill() check.Verdict {
	c := sc.visit(0, 1)
	if err := sc.Drive(c.Done, case06.Patience); err != nil {
		return case06.WaitVerdict(err, "the first visitor, who fills the shelf, was")
	}
	if v := shelves.AllGot(c.Outcomes(), catalog.Books(catalog.Bestsellers)); !v.Pass {
		return check.Failed("", "the first visitor, on an empty Redis: "+v.Message)
	}
	if sc.Reads() != 1 {
		return check.Failed(count(sc.Reads(), "read"), "the first visitor, on an empty Redis, should make one read")
	}
	sc.filled = sc.Clock.Now()
	return check.Passed("")
}

// filledScene starts n instances and has shop-1's first visitor fill the
// shelf (see fill). It returns nil and the verdict when the world could
// not be opened or the fill went wrong, having closed what it opened.
func filledScene(h *harness.H, newShop NewShop, n int) (*scene, check.Verdict) {
	sc, err := newScene(h, newShop, n)
	if err != nil {
		return nil, fleet.Unreachable(err)
	}
	if v := sc.fill(); !v.Pass {
		sc.Close()
		return nil, v
	}
	return sc, check.Passed("")
}

// until lets time pass, on the shops' clock and in Redis, to d after the
// fill.
func (sc *scene) until(d time.Duration) error {
	if left := sc.filled.Add(d).Sub(sc.Clock.Now()); left > 0 {
		return sc.Elapse(left)
	}
	return nil
}

// settled lets whatever runs come to rest, without moving the clock.
func (sc *scene) settled() error {
	return sc.Drive(func() bool { return true }, 0)
}

// errPrimaryDown is what the failing queries of FailedRebuild return.
var errPrimaryDown = errors.New("the primary is down")

// lists counts the outcomes that are a list, and says which visitors got
// something other than the source's list.
func lists(outs []harness.Outcome[[]string]) (int, string) {
	return listsOf(catalog.Bestsellers, outs)
}

// listsOf is lists for the readers of shelf.
func listsOf(shelf string, outs []harness.Outcome[[]string]) (int, string) {
	want := catalog.Books(shelf)
	n := 0
	for i, o := range outs {
		switch {
		case !o.Returned:
		case o.Panic != "":
			return n, fmt.Sprintf("visitor %d's call panicked: %s", i+1, o.Panic)
		case o.Err == nil && !slices.Equal(o.Value, want):
			return n, fmt.Sprintf("visitor %d got %q, not the source's list", i+1, o.Value)
		case o.Err == nil:
			n++
		}
	}
	return n, ""
}

// returned counts the visitors who have returned.
func returned(outs []harness.Outcome[[]string]) int {
	n := 0
	for _, o := range outs {
		if o.Returned {
			n++
		}
	}
	return n
}

// count says "1 read" or "3 reads".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// at names a moment of a scene by its distance from the fill, "09:00:31".
func (sc *scene) at(d time.Duration) string {
	return sc.filled.Add(d).Format("15:04:05.0")
}
