package case04

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"

	"stampede/checker/check"
	"stampede/checker/harness"
	"stampede/checker/point"
	"stampede/checker/shelves"
	"stampede/checker/stack"
	"stampede/shop/catalog"
)

// Hitters is how many visitors read a filled shelf at once.
const Hitters = 16

// allShelves are the shop's shelves, in the order the checks fill them.
var allShelves = []string{catalog.Bestsellers, catalog.NewReleases, catalog.StaffPicks}

// top returns a visit that asks the shop for a shelf.
func top(s shelves.Shop, shelf string) func(context.Context, int) ([]string, error) {
	return func(ctx context.Context, _ int) ([]string, error) { return s.Top(ctx, shelf) }
}

// fill sends one visitor for the shelf and waits for the list, so that
// the shelf is in the cache.
func fill(h *harness.H, shop shelves.Shop, shelf string) check.Verdict {
	crowd := harness.Visit(h, 1, top(shop, shelf))
	if err := crowd.Wait(); err != nil {
		return shelves.Stuck(err)
	}
	return shelves.AllGot(crowd.Outcomes(), catalog.Books(shelf))
}

// HitApart checks that hits on a filled shelf go on while another shelf's
// slow query runs, with a fill of a third shelf wanting to write the cache
// meanwhile. It catches a fill that holds the cache's write lock across
// the query (the hits, even on the read side, queue behind it) and one
// that holds the read lock across it (the third shelf's writer waits for
// it, and the hits queue behind that waiting writer).
func HitApart(h *harness.H, newShop shelves.New) check.Verdict {
	gate := harness.NewGate()
	db := catalog.New(catalog.WithCost(0), catalog.WithHook(gate.Hold(catalog.NewReleases)))
	shop := newShop(db)
	defer gate.Open()
	if v := fill(h, shop, catalog.Bestsellers); !v.Pass {
		return check.Failed("", "filling the bestseller shelf first: "+v.Message)
	}

	slow := harness.Visit(h, 1, top(shop, catalog.NewReleases))
	defer func() { gate.Open(); _ = slow.Wait() }()
	if err := slow.Settle(); err != nil {
		return shelves.Stuck(err)
	}
	if db.Queries(catalog.NewReleases) == 0 {
		return check.Failed("", "the new-releases visitor never reached the database: "+slow.Where())
	}

	// A fill of another shelf whose query is not held: it wants to write
	// the cache while the new-releases query runs. If something is held for
	// reading across that query, this writer waits, and an RWMutex then
	// lets no new reader in: in a real shop, the next fill always comes.
	writer := harness.Visit(h, 1, top(shop, catalog.StaffPicks))
	defer func() { gate.Open(); _ = writer.Wait() }()
	if err := writer.Settle(); err != nil {
		return shelves.Stuck(err)
	}
	writerWaits := !writer.Done()
	writerWhere := ""
	if writerWaits {
		writerWhere = writer.Where()
	}

	hits := harness.Visit(h, Hitters, top(shop, catalog.Bestsellers))
	if err := hits.Settle(); err != nil {
		return shelves.Stuck(err)
	}
	if !hits.Done() {
		where := hits.Where()
		gate.Open()
		_ = hits.Wait()
		if writerWaits {
			return check.Failed("held", "a staff-picks fill waited to write the cache while the new-releases query ran ("+writerWhere+
				"), and the bestseller hits queued behind that waiting writer: "+where+
				". A read lock held across a query stops every writer, and an RWMutex lets no new reader in while a writer waits: "+
				"hold the cache's lock for the map access only, never across the query")
		}
		return check.Failed("held", "the bestseller hits waited for the new-releases query: "+where)
	}
	if writerWaits {
		return check.Failed("held", "the staff-picks visitor waited for the new-releases query, which is another shelf's: "+writerWhere)
	}
	if v := shelves.AllGot(hits.Outcomes(), catalog.Books(catalog.Bestsellers)); !v.Pass {
		return v
	}
	return check.Passed(fmt.Sprintf("%d hits served while the new-releases query ran", Hitters))
}

// HitsShared checks that a hit takes no exclusive lock, so that hits never
// wait for each other. It catches the cache read under a plain sync.Mutex,
// or under the write side of an RWMutex, and hits that go through the
// shelf's fetch lock.
//
// No outcome shows it: a hit under a mutex returns the right list, only
// later. So the checker plays the other hit itself. With every shelf
// filled and the shop at rest, it holds each of the shop's locks the way a
// hit that shares would (see held), and sends the hits. A hit that shares
// goes through; a hit that wants a lock alone is caught waiting for it.
// That settles it for every lock the checker can reach. For locks it
// cannot reach, it then lets hits run with the block profile on: a hit
// recorded waiting in sync.Mutex.Lock or sync.RWMutex.Lock waited behind
// another hit, as nothing else runs. First two hits taking turns one
// statement each (so that one is inside its lock when the other asks for
// it, in every run), then many at once. Those parts can only find more;
// they never clear what the first found.
func HitsShared(h *harness.H, newShop shelves.New) check.Verdict {
	db := catalog.New(catalog.WithCost(0))
	shop := newShop(db)
	for _, shelf := range allShelves {
		if v := fill(h, shop, shelf); !v.Pass {
			return check.Failed("", "filling the shelves first: "+v.Message)
		}
	}
	if err := h.Settled(func() bool { return true }); err != nil {
		return shelves.Stuck(err)
	}

	locks := holdLocks(shop)
	hits := harness.Visit(h, Hitters, top(shop, catalog.Bestsellers))
	err := hits.Settle()
	var where []string
	if err == nil && !hits.Done() {
		where = exclusiveWaits(h)
	}
	nheld := locks.count()
	locks.releaseAll()
	if werr := hits.Wait(); err == nil {
		err = werr
	}
	if err != nil {
		return shelves.Stuck(err)
	}
	if v := shelves.AllGot(hits.Outcomes(), catalog.Books(catalog.Bestsellers)); !v.Pass {
		return v
	}
	if len(where) > 0 {
		return check.Failed("waited", fmt.Sprintf(
			"the checker held the shop's %d lock(s) as a hit that shares would, and a hit waited for one alone: %s",
			nheld, strings.Join(where, "; ")))
	}

	var waits []string
	v := h.Under(point.Lockstep(false), func() check.Verdict {
		waits, err = hammer(h, shop, 2, lockstepRounds, false)
		return check.Passed("")
	})
	if err == nil && !v.Pass {
		return v
	}
	if err == nil && len(waits) == 0 {
		waits, err = hammer(h, shop, Hitters, HammerRounds, true)
	}
	if err != nil {
		return shelves.Stuck(err)
	}
	if len(waits) > 0 {
		return check.Failed("waited", "with only hits running, hits waited for each other: "+strings.Join(waits, "; ")+
			" (a hit should read the cache beside any number of other hits: a read lock, sync.Map, or an atomic pointer to a map nobody changes)")
	}
	return check.Passed(fmt.Sprintf("%d hits at once", Hitters))
}

// exclusiveWaits says where visitors are parked in the student's code
// asking for a lock alone.
func exclusiveWaits(h *harness.H) []string {
	var where []string
	for _, g := range stack.All() {
		if g.State != "sync.Mutex.Lock" && g.State != "sync.RWMutex.Lock" || !visitor(g) {
			continue
		}
		if f, ok := g.In(h.Dir()); ok {
			where = append(where, fmt.Sprintf("%s in %s", stack.Where(f, check.Module), g.State))
		}
	}
	slices.Sort(where)
	return slices.Compact(where)
}

// visitor reports whether g is a visitor of a crowd, not a goroutine of
// the shop's own.
func visitor(g stack.Goroutine) bool {
	return slices.ContainsFunc(g.Frames, func(f stack.Frame) bool {
		return strings.HasSuffix(f.File, "checker/harness/crowd.go")
	})
}

// HammerRounds is how many hits each hitter makes while the block profile
// is on.
const HammerRounds = 4000

// lockstepRounds is how many hits each of two hitters makes in lockstep
// (point.Lockstep): taking turns one statement each, a hit that takes a
// lock alone is held inside it while the other asks for it, in every run,
// where the hammer needs two hits to collide on two processors. It finds
// the locks the checker cannot reach to hold (a package variable).
const lockstepRounds = 3

// hammer lets hitters visitors hit the bestseller shelf rounds times each
// with the block profile on, and returns where a hit was recorded waiting
// for an exclusive lock; with look, it also looks for hits spinning while
// they run.
func hammer(h *harness.H, shop shelves.Shop, hitters, rounds int, look bool) ([]string, error) {
	var failed atomic.Int64
	// Hits collide only when one is caught inside its lock: with a single
	// processor that takes a preemption at the wrong instant, with several
	// it happens all the time. So the hammer runs on at least four.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(4, runtime.GOMAXPROCS(0))))
	want := catalog.Books(catalog.Bestsellers)
	runtime.SetBlockProfileRate(1)
	crowd := harness.Visit(h, hitters, func(ctx context.Context, _ int) ([]string, error) {
		var books []string
		for range rounds {
			b, err := shop.Top(ctx, catalog.Bestsellers)
			if err != nil || !slices.Equal(b, want) {
				failed.Add(1)
			}
			books = b
		}
		return books, nil
	})
	var spins []string
	if look {
		spins = spinning(h, crowd)
	}
	err := crowd.Wait()
	runtime.SetBlockProfileRate(0)
	if err != nil {
		return nil, err
	}
	if p := crowd.Panicked(); p != "" {
		return []string{"a hit panicked: " + p}, nil
	}
	if n := failed.Load(); n > 0 {
		return []string{fmt.Sprintf("and %d hits did not get the list", n)}, nil
	}
	return append(blockedAlone(h.Dir()), spins...), nil
}

// spinning looks at the hitters while they run and says where one was
// seen yielding in the student's code: a spin lock that waits for another
// hit in a loop around runtime.Gosched, which no profile records. A hit
// that shares never yields, so this finds only waits; it may miss a spin
// lock whose waits are too short to be seen.
func spinning(h *harness.H, crowd *harness.Crowd[[]string]) []string {
	seen := map[string]int{}
	for look := 0; look < 400 && !crowd.Done(); look++ {
		for _, g := range stack.All() {
			if !visitor(g) || !slices.ContainsFunc(g.Frames, func(f stack.Frame) bool { return f.Func == "runtime.Gosched" }) {
				continue
			}
			if f, ok := g.In(h.Dir()); ok {
				seen[stack.Where(f, check.Module)]++
			}
		}
		runtime.Gosched()
	}
	var where []string
	for place, n := range seen {
		where = append(where, fmt.Sprintf("%s spinning around runtime.Gosched (seen %d times)", place, n))
	}
	slices.Sort(where)
	return where
}

// blockedAlone reads the block profile for waits of the hammer's hitters
// made from the package directory dir: on a lock taken alone
// (sync.Mutex.Lock, the write side of an RWMutex), on a channel (a
// one-token channel used as a mutex, a request to an owner goroutine that
// serves hits one at a time), or on a sync.Cond. With only hits running,
// a hit that waits at all waits for another hit, whatever the primitive.
func blockedAlone(dir string) []string {
	var recs []runtime.BlockProfileRecord
	for n := 64; ; n *= 2 {
		recs = make([]runtime.BlockProfileRecord, n)
		if got, ok := runtime.BlockProfile(recs); ok {
			recs = recs[:got]
			break
		}
	}
	var where []string
	for _, r := range recs {
		frames := runtime.CallersFrames(r.Stack())
		var waits []string
		place, hitter, held := "", false, false
		for {
			f, more := frames.Next()
			hitter = hitter || strings.HasPrefix(f.Function, hammerFunc)
			held = held || strings.HasPrefix(f.Function, pointPkg)
			if w, ok := waitNames[f.Function]; ok {
				waits = append(waits, w)
			}
			if len(waits) > 0 && place == "" && inDir(f.File, dir) {
				place = stack.Where(stack.Frame{File: f.File, Line: f.Line}, check.Module)
			}
			if !more {
				break
			}
		}
		if place != "" && hitter && !held {
			// The outermost wait names what the student called: an
			// RWMutex's Lock waits inside a Mutex's Lock.
			where = append(where, fmt.Sprintf("%s in %s (%d times)", place, waits[len(waits)-1], r.Count))
		}
	}
	slices.Sort(where)
	return where
}

// waitNames names the runtime's and the sync package's waits as goroutine
// states do. A read lock is not among them: with only hits running it
// waits only behind a hit that takes the write side, which is named.
var waitNames = map[string]string{
	"sync.(*Mutex).Lock":     "sync.Mutex.Lock",
	"sync.(*RWMutex).Lock":   "sync.RWMutex.Lock",
	"sync.(*Cond).Wait":      "sync.Cond.Wait",
	"sync.(*WaitGroup).Wait": "sync.WaitGroup.Wait",
	"runtime.chanrecv1":      "chan receive",
	"runtime.chanrecv2":      "chan receive",
	"runtime.chansend1":      "chan send",
	"runtime.selectgo":       "select",
}

// pointPkg prefixes the functions of package point: a wait inside one is a
// schedule point's hold, the checker's own, not the student's.
const pointPkg = check.Module + "/checker/point."

// hammerFunc names hammer, whose closure every hitter runs.
const hammerFunc = check.Module + "/checker/case04.hammer"

// inDir reports whether file lies directly in the package directory dir.
func inDir(file, dir string) bool {
	i := strings.LastIndex(file, "/")
	return i >= 0 && (file[:i] == dir || strings.HasSuffix(file[:i], "/"+dir))
}
