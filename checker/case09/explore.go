package case09

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"stampede/checker/case06"
	"stampede/checker/check"
	"stampede/checker/explore"
	"stampede/checker/fleet"
	"stampede/checker/harness"
	"stampede/checker/shelves"
	"stampede/shop/catalog"
	"stampede/shop/clock"
)

// The explorer of case 9 plays random scenes on a fleet, on the shops'
// clock: two to four instances; one shelf or two, the second filled at the
// same moment as the first or a little later; a cold burst at each fill
// (one visitor with a deadline that ends while the fill runs); a burst of
// stale readers past the logical expiry, arriving on the moments the
// rebuild starts and lands; now and then a delete on the write path,
// alone or in the middle of a rebuild, with readers just after it;
// readers around the physical expiry; a source that is down for a while
// (from the logical expiry, sometimes past the physical one); reads that
// cost 0 to 150 ms each, a different cost each time; and visitors whose
// contexts end, by cancellation or by deadline. Every visitor's context
// also ends when it leaves, as a request's does. Each scene is held to
// rules that every correct answer keeps under every schedule (see
// docs/explorer.md, case 9, for why none can fail a right
// answer):
//
//  1. every list served is the source's list for its shelf;
//  2. a visitor's error is "try again" (while a read of its shelf ran or
//     failed during its visit), its own context's error once that ended,
//     or anything if a read of its shelf failed while it was inside;
//  3. a reader who finds its shelf in Redis (filled earlier, younger than
//     54 s, not deleted since) and has no neighbour of its instance still
//     waiting for the shelf returns at the instant it arrived, with the
//     list: nobody waits for a rebuild while a value can be served;
//  4. a shelf is never read twice at once, and never while a value landed
//     less than 20 s before is in Redis (deletes excuse both): one read per
//     expiry across the fleet;
//  5. a reader who finds its shelf stale (31 s to 54 s old) finds a read
//     of it started since the fill, at the latest at its own instant;
//  6. a list served comes from a read that landed no more than 60.5 s
//     before the visitor arrived, and after the last delete of its shelf
//     before it arrived: nothing older than the physical expiry, nothing
//     the write path deleted;
//  7. a read does not fail because the visitor whose context it ran on
//     left with the list (a rebuild on the request's context);
//  8. every key has a time to live, after each command that may write and
//     when the scene ends;
//  9. every visitor returns.
//
// Times are the shops' clock's, which moves only when the fleet is at
// rest; "at the instant" means before it moved again.

// exploreScenes is how many scenes one run plays. A scene builds a fleet
// on a fresh embedded Redis and plays some 80 s of the shops' clock in a
// few dozen moves.
const exploreScenes = 8

// ExploreInfo describes the explorer's check.
var ExploreInfo = check.Info{
	ID:     "explore",
	Scenes: true,
	Name: "random fleet scenes keep every invariant (two shelves, arrivals as a rebuild starts and lands, deletes during a rebuild, " +
		"reads that cost more or less and fail, deadlines and cancels)",
	Catches: "bugs no single scene stages: a lock or a refresh flight shared by every shelf, a waiter that answers a deadline with " +
		"context.Canceled, a second read when a reader arrives as a rebuild lands, a stale value served after a delete or past its " +
		"physical expiry in some path, a rebuild lost with its reader's context",
}

const ems = time.Millisecond

// evisitor is one visitor of a scene.
type evisitor struct {
	Shop  int
	Shelf string
	At    time.Duration
	// End, when not 0, ends the visitor's context that long after it
	// arrives: with context.DeadlineExceeded if Deadline, else
	// context.Canceled.
	End      time.Duration
	Deadline bool
}

// einval is one delete on the write path.
type einval struct {
	Shop  int
	Shelf string
	At    time.Duration
}

// edown is a time when the source fails every read of a shelf that starts
// in it.
type edown struct {
	Shelf    string
	From, To time.Duration
}

// escene is one random scene.
type escene struct {
	Seed     uint64
	Shops    int
	Visitors []evisitor
	Deletes  []einval
	Downs    []edown
	Costs    map[string][]time.Duration // shelf -> its reads' costs, in order
}

// pick returns one of xs.
func pick[T any](r *rand.Rand, xs ...T) T { return xs[r.IntN(len(xs))] }

// drawScene returns the scene of a seed.
func drawScene(seed uint64) escene {
	r := rand.New(rand.NewPCG(seed, 0x5e27e57a1e))
	sc := escene{Seed: seed, Shops: 2 + r.IntN(3), Costs: map[string][]time.Duration{}}
	// Two shelves filled together, the second as the first fill runs or
	// lands, so that their fills and their expiries overlap; and now and
	// then a third, filled later.
	shelfs := []string{catalog.Bestsellers, pick(r, catalog.NewReleases, catalog.StaffPicks)}
	fills := []time.Duration{0, pick(r, 0, 10*ems, 50*ems, 100*ems)}
	if r.IntN(2) == 0 {
		third := catalog.NewReleases
		if shelfs[1] == third {
			third = catalog.StaffPicks
		}
		shelfs = append(shelfs, third)
		fills = append(fills, pick(r, 5*time.Second, time.Duration(1+r.IntN(20))*time.Second))
	}
	// Each read costs what it costs; the first few of each shelf take some
	// time, so that a fill or a rebuild is still running when the next
	// reader comes.
	costs := []time.Duration{0, 10 * ems, 50 * ems, 100 * ems, 150 * ems}
	for _, s := range shelfs {
		for k := range 8 {
			c := costs[r.IntN(len(costs))]
			if k < 3 && c == 0 {
				c = 50 * ems
			}
			sc.Costs[s] = append(sc.Costs[s], c)
		}
	}
	// The first fill is slow enough for a deadline to end inside it.
	sc.Costs[catalog.Bestsellers][0] = 150 * ems
	shop := func() int { return r.IntN(sc.Shops) }
	add := func(shop int, shelf string, at time.Duration) {
		v := evisitor{Shop: shop, Shelf: shelf, At: at}
		if r.IntN(4) == 0 {
			v.End = pick(r, 10*ems, 50*ems, 100*ems, 500*ems, 2*time.Second)
			v.Deadline = r.IntN(2) == 0
		}
		sc.Visitors = append(sc.Visitors, v)
	}
	// A cold burst at each fill; on the bestsellers, a visitor with a
	// deadline that ends while the first fill runs.
	for i, s := range shelfs {
		for range 1 + r.IntN(3) {
			add(shop(), s, fills[i]+pick(r, 0, 0, 10*ems, 50*ems))
		}
	}
	sc.Visitors = append(sc.Visitors, evisitor{Shop: shop(), Shelf: catalog.Bestsellers, At: 10 * ems, End: 100 * ems, Deadline: true})
	// Stale readers past the first shelves' logical expiry: one of each
	// shelf at the same instant, then more, arriving as the rebuilds start
	// and land.
	stale := 31*time.Second + 500*ems + pick(r, 0, 0, 500*ems, 3*time.Second, 10*time.Second)
	for _, s := range shelfs {
		add(shop(), s, stale)
	}
	for range 2 + r.IntN(5) {
		add(shop(), pick(r, shelfs...), stale+pick(r, 0, 10*ems, 50*ems, 100*ems, 150*ems, 160*ems, time.Second))
	}
	// A delete on the write path while a list is fresh, rebuilt at the
	// stale burst: readers of it on another instance a moment before, and
	// on that instance and others just after (an instance that served the
	// list must not serve it again).
	d := einval{Shop: shop(), Shelf: pick(r, shelfs[:2]...), At: stale + pick(r, 2*time.Second, 5*time.Second, 10*time.Second)}
	other := (d.Shop + 1 + r.IntN(sc.Shops-1)) % sc.Shops
	add(other, d.Shelf, d.At-pick(r, 100*ems, time.Second))
	// (The clock wakes sleepers due within 10 ms of each other together:
	// 20 ms is the next instant.)
	add(other, d.Shelf, d.At+20*ems)
	for range r.IntN(3) {
		add(shop(), d.Shelf, d.At+pick(r, 100*ems, time.Second))
	}
	sc.Deletes = append(sc.Deletes, d)
	// Now and then a delete in the middle of a rebuild.
	if r.IntN(2) == 0 {
		d := einval{Shop: shop(), Shelf: pick(r, shelfs...), At: stale + pick(r, 50*ems, 100*ems)}
		for range 1 + r.IntN(3) {
			add(shop(), d.Shelf, d.At+pick(r, ems, 10*ems, 20*ems, 100*ems, time.Second))
		}
		sc.Deletes = append(sc.Deletes, d)
	}
	// The source down for a while, from the logical expiry on: briefly, or
	// past the physical expiry.
	if r.IntN(3) == 0 {
		s := pick(r, slices.DeleteFunc(slices.Clone(shelfs), func(s string) bool { return s == d.Shelf })...)
		from := pick(r, 29*time.Second, stale)
		sc.Downs = append(sc.Downs, edown{Shelf: s, From: from, To: from + pick(r, 500*ems, 10*time.Second, 40*time.Second)})
	}
	// Readers around the physical expiry, and a few at random.
	for range r.IntN(3) {
		add(shop(), pick(r, shelfs...), pick(r, 59*time.Second, 61*time.Second, 61*time.Second+500*ems, 65*time.Second))
	}
	for range r.IntN(4) {
		add(shop(), pick(r, shelfs...), time.Duration(r.IntN(7000))*10*ems)
	}
	slices.SortStableFunc(sc.Deletes, func(a, b einval) int { return int(a.At - b.At) })
	return sc
}

func (sc escene) clone() escene {
	c := sc
	c.Visitors = slices.Clone(sc.Visitors)
	c.Deletes = slices.Clone(sc.Deletes)
	c.Downs = slices.Clone(sc.Downs)
	c.Costs = map[string][]time.Duration{}
	for s, cs := range sc.Costs {
		c.Costs[s] = slices.Clone(cs)
	}
	return c
}

// at names a moment of a scene, "09:00:31.500".
func at(d time.Duration) string { return nine.Add(d).Format("15:04:05.000") }

// nine is when every scene starts, on the shops' clock (case 6's fleet
// starts its clock there).
var nine = time.Date(2025, time.March, 3, 9, 0, 0, 0, time.UTC)

func (sc escene) String() string {
	var vs []string
	for i, v := range sc.Visitors {
		s := fmt.Sprintf("%d: shop-%d %s at %s", i+1, v.Shop+1, v.Shelf, at(v.At))
		if v.End > 0 {
			how := "cancelled"
			if v.Deadline {
				how = "deadline"
			}
			s += fmt.Sprintf(" (%s %v later)", how, v.End)
		}
		vs = append(vs, s)
	}
	out := fmt.Sprintf("%d instances, %d visitors (%s)", sc.Shops, len(sc.Visitors), strings.Join(vs, "; "))
	for _, d := range sc.Deletes {
		out += fmt.Sprintf("; shop-%d deletes %s at %s", d.Shop+1, d.Shelf, at(d.At))
	}
	for _, d := range sc.Downs {
		out += fmt.Sprintf("; the source fails every read of %s begun from %s to %s", d.Shelf, at(d.From), at(d.To))
	}
	for _, s := range []string{catalog.Bestsellers, catalog.NewReleases, catalog.StaffPicks} {
		if c, ok := sc.Costs[s]; ok {
			var ds []string
			for _, d := range c {
				ds = append(ds, d.String())
			}
			out += fmt.Sprintf("; %s reads take %s", s, strings.Join(ds, ", "))
		}
	}
	return out
}

// cost is the cost of a shelf's k-th read.
func (sc escene) cost(shelf string, k int) time.Duration {
	if cs := sc.Costs[shelf]; k < len(cs) {
		return cs[k]
	}
	return 50 * ems
}

// down reports whether a read of shelf begun at t fails.
func (sc escene) down(shelf string, t time.Duration) bool {
	return slices.ContainsFunc(sc.Downs, func(d edown) bool { return d.Shelf == shelf && t >= d.From && t < d.To })
}

// The rules' numbers, from the hand-built checks: failed-rebuild serves a
// list 55 s after its fill, so the physical expiry is at least that;
// bounded serves none 60.5 s after it, so it is at most that; one-rebuild
// and bounded rebuild a list 31 s old, so the logical expiry is at most
// that; and one-rebuild forbids a read of a list a second old.
const (
	surelyThere = 54 * time.Second         // a value this young is still in Redis
	surelyStale = 31 * time.Second         // a value this old is stale
	oldest      = 60*time.Second + 500*ems // no value older is served
	young       = 20 * time.Second         // no value this young is read again
)

// eread is one source read of a scene.
type eread struct {
	shelf      string
	k          int
	start, end time.Duration
	startSeq   int
	endSeq     int // 0 while it runs
	failed     bool
	// timedOut is set when the read's context reached its deadline at the
	// instant the read landed: the timer woken by the same move of the
	// clock races the catalog's own look at the context after the hook
	// returns, and which comes first is the scheduler's. Such a read is
	// unsure. Any other end is not: the clock moves, and the scene acts,
	// only when the fleet is at rest, so the catalog has looked by then;
	// and a cancel at that instant is the shop's own, once it has the
	// result (as a flight's deadline context is cancelled when it returns).
	ended    time.Duration
	timedOut bool
}

// unsure reports whether the shop may have seen the read fail although
// the hook let it land. w.mu is held.
func (r *eread) unsure() bool { return r.timedOut && r.ended == r.end }

// erecord is what one visitor did.
type erecord struct {
	arrived, left       time.Duration
	arriveSeq, leaveSeq int // leaveSeq 0 while inside
	endedSeq            int // when the scene ended its context, 0 if not
}

// edelete is one delete as it happened.
type edelete struct {
	shelf    string
	at       time.Duration
	startSeq int
	endSeq   int
}

// eworld plays one scene.
type eworld struct {
	f       *case06.Fleet
	sc      escene
	mu      sync.Mutex
	seq     int
	reads   []*eread
	visits  []erecord
	deletes []*edelete
	*explore.Record
}

func (w *eworld) now() time.Duration { return w.f.Clock.Now().Sub(nine) }

// next returns the next number of the run's order; w.mu is held.
func (w *eworld) next() int { w.seq++; return w.seq }

// deletedBetween reports whether a delete of shelf came at a moment in
// [from, to]; w.mu is held.
func (w *eworld) deletedBetween(shelf string, from, to time.Duration) bool {
	return slices.ContainsFunc(w.deletes, func(d *edelete) bool { return d.shelf == shelf && d.at >= from && d.at <= to })
}

// fills returns the reads of a shelf that surely wrote a value: they
// succeeded on a context nobody could end, and no delete came while they
// ran (a shop may decline to write what it read before a delete). w.mu is
// held.
func (w *eworld) fills(shelf string) []*eread {
	var out []*eread
	for _, r := range w.reads {
		if r.shelf == shelf && r.endSeq != 0 && !r.failed && !r.unsure() && !w.deletedBetween(shelf, r.start, r.end) {
			out = append(out, r)
		}
	}
	return out
}

// lastFill returns the latest fill of a shelf that landed before t, and
// whether it is still there at t: no delete since. w.mu is held.
func (w *eworld) lastFill(shelf string, t time.Duration) (*eread, bool) {
	var last *eread
	for _, r := range w.fills(shelf) {
		if r.end < t && (last == nil || r.end > last.end) {
			last = r
		}
	}
	if last == nil {
		return nil, false
	}
	return last, !w.deletedBetween(shelf, last.end, t)
}

// hook is the source: it records the read, holds it for its cost on the
// shops' clock, fails it as the scene says, and holds it to rule 4.
func (w *eworld) hook(ctx context.Context, shelf string) error {
	w.mu.Lock()
	k := 0
	for _, r := range w.reads {
		if r.shelf == shelf {
			k++
		}
	}
	now := w.now()
	rd := &eread{shelf: shelf, k: k, start: now, startSeq: w.next()}
	rd.failed = w.sc.down(shelf, now)
	for _, o := range w.reads {
		if o.shelf == shelf && o.endSeq == 0 && !w.deletedBetween(shelf, o.start, now) {
			w.Fail("%s was read from the source twice at once: read %d began at %s while read %d, begun at %s, still ran. "+
				"One rebuild per expiry for the whole fleet: the lock in Redis (one per shelf) decides who reads, and the "+
				"others serve what they have or wait", shelf, k+1, at(now), o.k+1, at(o.start))
		}
	}
	for _, f := range w.fills(shelf) {
		if f.end <= now && now-f.end < young && !w.deletedBetween(shelf, f.end, now) {
			w.Fail("%s was read again at %s, though read %d had landed at %s, %v earlier, and nothing deleted it: "+
				"a fresh value is served as it is. Whoever takes the lock looks in Redis again before it reads (another "+
				"instance may have just written it)", shelf, at(now), k+1, at(f.end), now-f.end)
		}
	}
	w.reads = append(w.reads, rd)
	w.mu.Unlock()
	// Kept after the hook returns: an end at the instant the read lands
	// is the one that matters.
	context.AfterFunc(ctx, func() {
		timedOut := errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(context.Cause(ctx), context.DeadlineExceeded)
		w.mu.Lock()
		defer w.mu.Unlock()
		rd.ended, rd.timedOut = w.now(), timedOut
	})
	cost := w.sc.cost(shelf, k)
	w.Logf("read %d of %s begins (%v)", k+1, shelf, cost)
	over := w.f.Hold(context.WithoutCancel(ctx), cost)

	w.mu.Lock()
	defer w.mu.Unlock()
	rd.end = w.now()
	var err error
	switch {
	case errors.Is(over, case06.ErrOver):
		rd.failed = true
		err = fmt.Errorf("read %d of %s: %w", k+1, shelf, over)
	case rd.failed:
		err = fmt.Errorf("the primary is down (read %d of %s)", k+1, shelf)
	case ctx.Err() != nil:
		rd.failed = true
		err = ctx.Err()
		if v := explore.VisitorOf(ctx); v >= 0 && w.leftWithList(v) {
			w.Fail("read %d of %s, begun at %s, ran on visitor %d's context, which ended when the visitor left with the "+
				"list; the read was lost with it, and the list stays stale. Start the rebuild on context.WithoutCancel(ctx)",
				k+1, shelf, at(rd.start), v+1)
		}
	}
	rd.endSeq = w.next()
	if err != nil {
		w.LogAt(rd.end, "read %d of %s fails: %v", k+1, shelf, err)
	} else {
		w.LogAt(rd.end, "read %d of %s lands", k+1, shelf)
	}
	return err
}

// leftWithList reports whether visitor v has left with its list, its
// context ended by its leaving. w.mu is held.
func (w *eworld) leftWithList(v int) bool {
	if v < 0 || v >= len(w.visits) {
		return false
	}
	r := w.visits[v]
	return r.leaveSeq != 0 && r.endedSeq == 0
}

// playScene plays a scene on a fresh fleet.
func playScene(h *harness.H, newShop NewShop, sc escene, story bool) explore.Played {
	var shops []Shop
	mk := func(db *catalog.DB, rdb *redis.Client, clk clock.Clock) shelves.Shop {
		s := newShop(db, rdb, clk)
		shops = append(shops, s)
		return s
	}
	w := &eworld{sc: sc, visits: make([]erecord, len(sc.Visitors))}
	w.Record = explore.NewRecord(w.now, at, story)
	f, err := case06.NewFleet(h, fleet.ServerURL(), mk, sc.Shops, 0, w.hook)
	if err != nil {
		return explore.Played{Err: fleet.Unusable(err)}
	}
	w.f = f
	defer f.Close()
	if f.World.Embedded() {
		// Every goroutine of the scene waits inside the process: the
		// scheduler's counts can tell rest, which the plays of the
		// switches check need by the thousand.
		defer h.CountsDecideRest()()
	}
	untimed := f.WatchTTLs()
	clk := f.Clock
	// The scene's own helpers (context ends) sleep on the clock until the
	// scene is over.
	scene, over := context.WithCancel(context.WithoutCancel(h.Context()))
	defer over()

	crowd := f.VisitWith(len(sc.Visitors), func(hctx context.Context, i int) ([]string, error) {
		v := sc.Visitors[i]
		if err := clk.Sleep(hctx, v.At); err != nil {
			return nil, err
		}
		ctx, end, cancel := explore.NewContext(i, v.Deadline)
		w.mu.Lock()
		w.visits[i].arrived, w.visits[i].arriveSeq = w.now(), w.next()
		w.Logf("visitor %d asks shop-%d for %s", i+1, v.Shop+1, v.Shelf)
		w.mu.Unlock()
		if v.End > 0 {
			go func() {
				if clk.Sleep(scene, v.End) != nil {
					return
				}
				w.mu.Lock()
				if w.visits[i].leaveSeq == 0 {
					w.visits[i].endedSeq = w.next()
					w.Logf("visitor %d's context ends (%s)", i+1,
						map[bool]string{true: "deadline", false: "cancelled"}[v.Deadline])
				}
				w.mu.Unlock()
				end()
			}()
		}
		books, err := shops[v.Shop].Top(ctx, v.Shelf)
		w.mu.Lock()
		w.visits[i].left, w.visits[i].leaveSeq = w.now(), w.next()
		switch {
		case err != nil:
			w.Logf("visitor %d gets an error: %v", i+1, err)
		case slices.Equal(books, catalog.Books(v.Shelf)):
			w.Logf("visitor %d gets the list", i+1)
		default:
			w.Logf("visitor %d gets %q", i+1, books)
		}
		w.mu.Unlock()
		// The request is over: its context ends, as a server's does.
		cancel()
		return books, err
	})
	dels := f.VisitWith(len(sc.Deletes), func(hctx context.Context, i int) ([]string, error) {
		d := sc.Deletes[i]
		if err := clk.Sleep(hctx, d.At); err != nil {
			return nil, err
		}
		w.mu.Lock()
		rec := &edelete{shelf: d.Shelf, at: w.now(), startSeq: w.next()}
		w.deletes = append(w.deletes, rec)
		w.Logf("shop-%d's write path deletes %s", d.Shop+1, d.Shelf)
		w.mu.Unlock()
		err := shops[d.Shop].Invalidate(context.Background(), d.Shelf)
		w.mu.Lock()
		rec.endSeq = w.next()
		w.mu.Unlock()
		return nil, err
	})
	// The drive's bound counts from the last arrival, a visitor's or a
	// delete's: a shrunk scene can keep a delete later than every visitor.
	var last time.Duration
	for _, v := range sc.Visitors {
		last = max(last, v.At)
	}
	for _, d := range sc.Deletes {
		last = max(last, d.At)
	}
	err = f.Drive(func() bool { return crowd.Done() && dels.Done() }, last+case06.Patience)
	switch {
	case errors.Is(err, fleet.ErrNoBound):
		w.Fail("%v after the last visitor or delete came, %s", case06.Patience, stillInside(crowd, dels, f))
	case w.Unrested(err):
	case err != nil:
		w.Fail("the visitors never finished: %v", err)
	}
	for i, o := range dels.Outcomes() {
		if o.Returned && (o.Err != nil || o.Panic != "") {
			w.Fail("shop-%d's Invalidate of %s failed: %v%s", sc.Deletes[i].Shop+1, sc.Deletes[i].Shelf, o.Err, o.Panic)
		}
	}
	w.judge(crowd.Outcomes())
	for _, bad := range f.World.Timeless(h.Context(), untimed) {
		w.Fail("%s", bad)
	}
	return w.Played()
}

// judge holds every visitor to rules 1, 2, 3, 5 and 6.
func (w *eworld) judge(outs []harness.Outcome[[]string]) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i, o := range outs {
		v, rec := w.sc.Visitors[i], w.visits[i]
		who := fmt.Sprintf("visitor %d (shop-%d, %s at %s)", i+1, v.Shop+1, v.Shelf, at(rec.arrived))
		if !o.Returned {
			continue // Drive has said so
		}
		if o.Panic != "" {
			w.Fail("%s: the call panicked: %s", who, o.Panic)
			continue
		}
		fill, there := w.lastFill(v.Shelf, rec.arrived)
		// Rule 5: a stale value has its rebuild started.
		if there && rec.arrived-fill.end >= surelyStale && rec.arrived-fill.end < surelyThere &&
			!slices.ContainsFunc(w.reads, func(r *eread) bool {
				return r.shelf == v.Shelf && r.start > fill.end && r.start <= rec.arrived
			}) {
			w.Fail("%s found the list stale: it landed at %s, %v earlier, past its logical expiry, and no read of %s "+
				"had started since. A stale value starts the fleet's one rebuild (judge its age by its time to live in Redis, "+
				"PTTL; take the lock for this shelf)", who, at(fill.end), (rec.arrived - fill.end).Round(ems), v.Shelf)
		}
		// Rule 3: nobody waits while a value can be served.
		if there && rec.arrived-fill.end < surelyThere && !w.mayJoin(i, fill) {
			if rec.left > rec.arrived || o.Err != nil {
				what := fmt.Sprintf("returned at %s", at(rec.left))
				if o.Err != nil {
					what = fmt.Sprintf("got the error %q", o.Err)
				}
				w.Fail("%s came when %s had been filled at %s, %v earlier, and nothing had deleted it, and it %s. "+
					"That value is inside its physical expiry (60 s): serve it at once, fresh or stale, and let the reader wait "+
					"for nobody's rebuild", who, v.Shelf, at(fill.end), (rec.arrived - fill.end).Round(ems), what)
				continue
			}
		}
		if o.Err != nil {
			w.judgeErr(i, who, o.Err)
			continue
		}
		// Rule 1.
		if !slices.Equal(o.Value, catalog.Books(v.Shelf)) {
			got := fmt.Sprintf("%q", o.Value)
			for _, other := range catalog.Shelves() {
				if other != v.Shelf && slices.Equal(o.Value, catalog.Books(other)) {
					got = "the list of " + other + ", another shelf"
				}
			}
			w.Fail("%s got %s, not the source's list for %s", who, got, v.Shelf)
			continue
		}
		// Rule 6: nothing past its physical expiry, nothing deleted.
		since := rec.arrived - oldest
		var deleted *edelete
		for _, d := range w.deletes {
			if d.shelf == v.Shelf && d.at < rec.arrived && d.at >= since {
				since, deleted = d.at, d
			}
		}
		if !slices.ContainsFunc(w.reads, func(r *eread) bool {
			return r.shelf == v.Shelf && r.endSeq != 0 && !r.failed && r.end >= since && r.end <= rec.left
		}) {
			if deleted != nil {
				w.Fail("%s was served the list, and no read of %s had landed since the write path deleted it at %s: it "+
					"got the deleted value. The grace window covers expiry, not invalidation: the delete removes every copy "+
					"(one key holds both expiries; no copy in memory, no second key)", who, v.Shelf, at(deleted.at))
			} else {
				w.Fail("%s was served the list, and no read of %s had landed in the %v before it came: the value was "+
					"past its physical expiry. Nothing older is ever served: no copy in memory, no key that outlives EX 60",
					who, v.Shelf, oldest)
			}
		}
	}
}

// mayJoin reports whether visitor i may have joined a wait of its
// instance begun while its shelf was missing, which a design may let it
// share until that wait's next look: an earlier visitor of the same
// instance and shelf was still inside, or the fill it would find landed
// less than a second before it came, or a delete of its shelf came within
// a budget before it. w.mu is held.
func (w *eworld) mayJoin(i int, fill *eread) bool {
	v, rec := w.sc.Visitors[i], w.visits[i]
	return w.neighbourWaiting(i) || rec.arrived-fill.end < time.Second ||
		w.deletedBetween(v.Shelf, rec.arrived-maxBudget, rec.arrived)
}

// neighbourWaiting reports whether another visitor of the same instance
// and shelf came earlier and was still inside at visitor i's arrival: i
// may join its wait, a design that rule 3 leaves alone. w.mu is held.
func (w *eworld) neighbourWaiting(i int) bool {
	v, rec := w.sc.Visitors[i], w.visits[i]
	for j, u := range w.sc.Visitors {
		r := w.visits[j]
		if j != i && u.Shop == v.Shop && u.Shelf == v.Shelf && r.arriveSeq != 0 && r.arriveSeq < rec.arriveSeq &&
			(r.leaveSeq == 0 || r.leaveSeq > rec.arriveSeq) {
			return true
		}
	}
	return false
}

// judgeErr holds a visitor's error to rule 2. w.mu is held.
func (w *eworld) judgeErr(i int, who string, err error) {
	v, rec := w.sc.Visitors[i], w.visits[i]
	inside := func(r *eread) bool {
		return r.shelf == v.Shelf && r.start <= rec.left && (r.endSeq == 0 || r.end >= rec.arrived)
	}
	failed := slices.ContainsFunc(w.reads, func(r *eread) bool { return inside(r) && r.failed && r.endSeq != 0 })
	if failed {
		return // a read it may share failed while it was inside
	}
	if rec.endedSeq != 0 && rec.endedSeq < rec.leaveSeq {
		want := context.Canceled
		if v.Deadline {
			want = context.DeadlineExceeded
		}
		if errors.Is(err, want) {
			return
		}
		w.Fail("%s: its context ended at %s with %v, and it got %q, which is not that error (errors.Is): a "+
			"visitor whose context ends gets its own ctx.Err(), and a deadline is not a cancellation", who,
			at(rec.arrived+v.End), want, err)
		return
	}
	var later interface{ RetryAfter() time.Duration }
	if errors.As(err, &later) && later.RetryAfter() > 0 {
		// A visitor may join the wait of its instance's flight, begun up to
		// a budget earlier (whose starter may have left): the read that
		// flight waited for ran in that time, or a delete took what it
		// wrote.
		since := rec.arrived - maxBudget
		waited := func(r *eread) bool {
			return r.shelf == v.Shelf && r.start <= rec.left && (r.endSeq == 0 || r.end >= since)
		}
		if slices.ContainsFunc(w.reads, waited) || w.deletedBetween(v.Shelf, since, rec.left) {
			return
		}
		w.Fail("%s got %q, though no read of %s had run in the %v before it came, nor while it waited, and nothing deleted it: nobody was rebuilding it. \"Try again\" is for a "+
			"reader who waited for another instance's rebuild; check that the lock it waits on is its own shelf's", who, err,
			v.Shelf, maxBudget)
		return
	}
	w.Fail("%s got the error %q: no read of %s failed while it was inside and its context had not ended, so the only "+
		"error it may get is \"try again\" (a *TryAgain with RetryAfter)", who, err, v.Shelf)
}

// explorer returns case 9's explorer for an implementation. A scene that
// breaks a rule is shrunk: fewer visitors, no delete, no outage, cheaper
// reads, contexts that do not end.
func explorer(newShop NewShop) *explore.Explorer[escene] {
	return &explore.Explorer[escene]{
		Case: 9, Scenes: exploreScenes, Unit: "fleet scenes", Points: true, Fixed: fixedScenes(),
		Draw:    drawScene,
		Play:    func(h *harness.H, sc escene, story bool) explore.Played { return playScene(h, newShop, sc, story) },
		Smaller: candidates,
		Size:    func(sc escene) int { return len(sc.Visitors) },
		Noun:    "visitors",
	}
}

// fixedScenes are the small scenes the switches check plays under every
// schedule with one switch between two of the shop's statements, and in
// lockstep: two readers of one instance find the shelf stale at one
// instant, where a look and an act on the instance's own state (who
// refreshes, who waits) written as two steps lets both back off, or both
// go on. (A third reader, of another instance, doubled the plays, some
// 190 of a fleet each, and caught only wrong/perinstance, which
// one-rebuild and explore catch too.)
func fixedScenes() []escene {
	costs := map[string][]time.Duration{catalog.Bestsellers: {50 * ems, 50 * ems, 50 * ems}}
	stale := 31*time.Second + 500*ems
	return []escene{
		{Shops: 2, Costs: costs, Visitors: []evisitor{
			{Shelf: catalog.Bestsellers}, {Shelf: catalog.Bestsellers, At: stale}, {Shelf: catalog.Bestsellers, At: stale}}},
	}
}

// switchesInfo describes case 9's check of the fixed scenes.
var switchesInfo = check.Info{
	ID:     "switches",
	Scenes: true,
	Parts:  2, // its plays, split by order: the long pole of a check
	Name: "small fleet scenes keep every invariant under every schedule with one switch between two of the shop's statements, " +
		"and with the goroutines taking turns one statement each " +
		"(two stale readers of one instance at once)",
	Catches: "an instance's own count of stale readers trying the lock, added to and read back in two steps, so that two readers " +
		"at once both back off and nobody rebuilds (wrong/refresher-count)",
}

// Switches plays the fixed scenes under every schedule with one switch
// (see explore.Explorer.Fixed).
func Switches(h *harness.H, newShop NewShop) check.Verdict { return explorer(newShop).Switches(h) }

// Explore plays exploreScenes scenes from the check's seed (or one of its
// own) and fails on the first that breaks a rule, shrunk.
func Explore(h *harness.H, newShop NewShop) check.Verdict { return explorer(newShop).Check(h) }

func candidates(sc escene) []escene {
	var out []escene
	edit := func(f func(*escene)) {
		c := sc.clone()
		f(&c)
		out = append(out, c)
	}
	for j := len(sc.Visitors) - 1; j >= 0 && len(sc.Visitors) > 1; j-- {
		edit(func(c *escene) { c.Visitors = slices.Delete(c.Visitors, j, j+1) })
	}
	for j := range sc.Deletes {
		edit(func(c *escene) { c.Deletes = slices.Delete(c.Deletes, j, j+1) })
	}
	for j := range sc.Downs {
		edit(func(c *escene) { c.Downs = slices.Delete(c.Downs, j, j+1) })
	}
	for j, v := range sc.Visitors {
		if v.End > 0 {
			edit(func(c *escene) { c.Visitors[j].End, c.Visitors[j].Deadline = 0, false })
		}
	}
	for s, cs := range sc.Costs {
		for k, d := range cs {
			if d > 0 {
				edit(func(c *escene) { c.Costs[s][k] = 0 })
			}
		}
	}
	return out
}

// stillInside says who had not returned when a scene's drive ran out:
// visitors, the write path's deletes, or, when neither can be placed, where
// the shop's goroutines were.
func stillInside(crowd, dels *harness.Crowd[[]string], f *case06.Fleet) string {
	var out []string
	if !crowd.Done() {
		out = append(out, "visitors were still waiting: "+orUnknown(crowd.Where()))
	}
	if !dels.Done() {
		out = append(out, "a delete of the write path (Invalidate) had not returned: "+orUnknown(dels.Where()))
	}
	if len(out) == 0 {
		return "the scene had not ended: " + strings.Join(f.Places(), "; ")
	}
	return strings.Join(out, "; ")
}

// orUnknown is where, or a word that says it could not be told.
func orUnknown(where string) string {
	if where == "" {
		return "(not found in any goroutine's stack: running, not waiting)"
	}
	return where
}
