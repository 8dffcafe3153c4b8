package case08

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"stampede/checker/check"
	"stampede/checker/explore"
	"stampede/checker/fleet"
	"stampede/checker/harness"
	"stampede/checker/point"
	"stampede/shop/clock"
	"stampede/shop/events"
)

// The explorer of case 8 plays random scenes of the box office's traffic on
// a fresh Redis and the shop's virtual clock: some pages warmed first, then
// readers of many pages who arrive in bursts, one by one, or at the instant
// a rebuild lands; queries of 0 to 50 ms that may fail; readers who leave
// (a cancellation or a deadline) part way, and every reader's context
// ended as soon as Page returns, as a server's request context is; pages
// that Redis loses at a random moment (an expiry, or a restart that
// empties it). Each scene also
// stages one window that no hand-built check does, in turn:
//
//	focus 0: a reader's miss is answered just before its page's rebuild
//	         lands, and held (a slow network) until just after it;
//	focus 1: the rebuild's write of the page is held on its way to Redis,
//	         and a reader arrives meanwhile;
//	focus 2: the reader who started a rebuild leaves half way through it
//	         (by a deadline in every other such scene, else a cancel),
//	         with readers of the page waiting on it and arriving after;
//	focus 3: a cold start of 22 to 28 pages, more than the pool, with
//	         readers of cached pages arriving while 20 rebuilds run.
//
// Scene i of a run is the scene of seed S+i and has focus (S+i) mod 4, so
// every run of four scenes or more stages each window. Every scene is held
// to invariants that any correct answer keeps under any schedule:
//
//  1. every reader gets its own page, or an error that is its own: its own
//     context's error once that context ended (errors.Is, so a deadline is
//     not a cancellation), the error of a failed query of its page, or a
//     "try again" (a RetryAfter method) once it has waited at least 0.1 s
//     of the shop's clock or its context ended. (The values check already
//     fails a budget that sends readers away within 0.1 s.)
//  2. per page, at most one query, plus one for each failed query of it and
//     each time the scene removed it from Redis: a success is stored, and
//     nothing else removes a page within a scene (its 30 s are far away);
//  3. never more than 20 queries in the database at once;
//  4. a reader whose page is in Redis when it arrives, and stays there, is
//     never seen waiting once the process is at rest: only a rebuild waits
//     for a database slot;
//  5. every page key written lives 30 to 35 s, read back from Redis after
//     each write (PTTL), as the ttl checks read them;
//  6. every reader returns.
//
// A held command is only a slow network, a reader who leaves is only a
// client that hung up, and a page that Redis loses is only an expiry: a
// correct shop copes with each, so none of the rules can fail it, whatever
// the schedule. Rule 1's 0.1 s is a bound on the shop's clock, not the
// wall clock, and is the hold the values check already requires. No rule
// is statistical.

// exploreScenes is how many scenes one run plays: each builds a shop on a
// fresh embedded Redis, a few tens of milliseconds on a quiet machine.
const exploreScenes = 24

// focuses is how many windows the scenes stage in turn.
const focuses = 4

// ExploreInfo describes the explorer's check for case 8.
var ExploreInfo = check.Info{
	ID:     "explore",
	Scenes: true,
	Name: "random scenes keep every invariant (misses that land as a rebuild does, slow writes, readers who leave, " +
		"a cold start past the pool with pages cached, pages lost at random moments)",
	Catches: "bugs no hand-built scene stages: no second look in Redis once the rebuild has its slot, a page stored after its flight " +
		"has left the table, a rebuild that runs on the context of the reader who started it, a database slot taken before the Redis read " +
		"(hits wait behind rebuilds), a reader's deadline answered as a cancellation",
}

// xplan is what one query of a page does.
type xplan struct {
	Cost time.Duration
	Fail bool
}

// xreader is one reader of a scene.
type xreader struct {
	Page     int
	At       time.Duration // when it asks, after the warm-up
	Leave    time.Duration // how long after At its context ends; 0 for never
	Deadline bool          // its context ends as a deadline, not a cancellation
	LateLook time.Duration // its first miss's answer is held this long on the way back
}

// xdelete is a moment at which Redis loses a page (or, with Page 0, every
// page: a restart).
type xdelete struct {
	At   time.Duration
	Page int
}

// xscene is one random scene of case 8.
type xscene struct {
	Seed    uint64
	Focus   int
	Warm    []int
	Readers []xreader
	Plans   map[int][]xplan       // page -> its queries' plans, in order
	SlowSet map[int]time.Duration // page -> how long its first rebuild's write is held
	Deletes []xdelete
}

const xms = time.Millisecond

// drawScene returns the scene of a seed.
func drawScene(seed uint64) xscene {
	r := rand.New(rand.NewPCG(seed, 0xca5e08))
	sc := xscene{Seed: seed, Focus: int(seed % focuses), Plans: map[int][]xplan{}, SlowSet: map[int]time.Duration{}}
	costs := []time.Duration{0, xms, 2 * xms, 5 * xms, 10 * xms, 20 * xms, 50 * xms}
	random := func() xplan { return xplan{Cost: costs[r.IntN(len(costs))], Fail: r.IntN(6) == 0} }
	plan := func(p int, first time.Duration) {
		sc.Plans[p] = []xplan{{Cost: first}, random(), random()}
	}
	ms := func(n int) time.Duration { return time.Duration(n) * xms }
	t0 := ms(r.IntN(10))
	focus := 1 // the focus's pages are 1 to focus
	switch sc.Focus {
	case 0: // a miss answered just before the rebuild lands, acted on just after
		c := []time.Duration{5 * xms, 10 * xms, 20 * xms}[r.IntN(3)]
		plan(1, c)
		b := t0 + ms(r.IntN(int(c/xms)))
		sc.Readers = append(sc.Readers, xreader{Page: 1, At: t0},
			xreader{Page: 1, At: b, LateLook: t0 + c - b + ms(1+r.IntN(3))})
	case 1: // the rebuild's write held on its way, a reader meanwhile
		c := []time.Duration{xms, 5 * xms, 10 * xms, 20 * xms}[r.IntN(4)]
		d := []time.Duration{3 * xms, 5 * xms, 10 * xms}[r.IntN(3)]
		plan(1, c)
		sc.SlowSet[1] = d
		sc.Readers = append(sc.Readers, xreader{Page: 1, At: t0},
			xreader{Page: 1, At: t0 + c + ms(1+r.IntN(int(d/xms)-1))})
	case 2: // the starter leaves half way through its rebuild
		c := []time.Duration{10 * xms, 20 * xms, 50 * xms}[r.IntN(3)]
		half := c / 2
		plan(1, c)
		// A deadline in every other such scene, so that a run of eight
		// scenes or more has both ways of leaving.
		sc.Readers = append(sc.Readers, xreader{Page: 1, At: t0, Leave: half, Deadline: seed/focuses%2 == 0},
			xreader{Page: 1, At: t0 + ms(1+r.IntN(int(half/xms)-1))},
			xreader{Page: 1, At: t0 + half + ms(1+r.IntN(int(half/xms)-1))})
	default: // a cold start past the pool, with cached pages read during it
		focus = pool + 2 + r.IntN(7)
		for p := 1; p <= focus; p++ {
			plan(p, []time.Duration{10 * xms, 20 * xms, 50 * xms}[r.IntN(3)])
			sc.Readers = append(sc.Readers, xreader{Page: p, At: t0})
		}
		for range 1 + r.IntN(4) {
			sc.Readers = append(sc.Readers, xreader{Page: 1 + r.IntN(focus), At: t0 + ms(r.IntN(2))})
		}
		for p := focus + 1; p <= focus+3; p++ {
			sc.Warm = append(sc.Warm, p)
			sc.Readers = append(sc.Readers, xreader{Page: p, At: t0 + ms(1+r.IntN(5))})
		}
	}
	// Around the focus: other pages, some warmed, read at random moments,
	// at the instant their first query lands, by readers who may leave.
	others := []int{}
	for p := focus + len(sc.Warm) + 1; p <= focus+len(sc.Warm)+1+r.IntN(3); p++ {
		others = append(others, p)
		if r.IntN(3) == 0 {
			sc.Warm = append(sc.Warm, p)
		} else {
			plan(p, costs[r.IntN(len(costs))])
			if r.IntN(4) == 0 {
				sc.Plans[p][0].Fail = true
			}
		}
	}
	readable := slices.Concat(others, sc.Warm)
	for range r.IntN(8) {
		rd := xreader{Page: readable[r.IntN(len(readable))], At: ms(r.IntN(60))}
		if first := slices.IndexFunc(sc.Readers, func(o xreader) bool { return o.Page == rd.Page }); first >= 0 && r.IntN(2) == 0 {
			rd.At = sc.Readers[first].At + sc.plan(rd.Page, 0).Cost // as its first rebuild lands
		}
		if r.IntN(5) == 0 {
			rd.Leave, rd.Deadline = []time.Duration{xms, 3 * xms, 10 * xms, 40 * xms}[r.IntN(4)], r.IntN(2) == 0
		}
		sc.Readers = append(sc.Readers, rd)
	}
	// Pages lost at half milliseconds, never at a reader's arrival: one of
	// the other pages, or (away from the first two focuses' page) all.
	for range r.IntN(3) {
		d := xdelete{At: 10*xms + ms(r.IntN(70)) + xms/2, Page: readable[r.IntN(len(readable))]}
		if sc.Focus >= 2 && r.IntN(3) == 0 {
			d.Page = 0
		}
		sc.Deletes = append(sc.Deletes, d)
	}
	slices.SortFunc(sc.Deletes, func(a, b xdelete) int { return int(a.At - b.At) })
	slices.Sort(sc.Warm)
	return sc
}

// plan returns what the k-th query of page p does: past the drawn plans, a
// query works and costs a millisecond.
func (sc xscene) plan(p, k int) xplan {
	if ps := sc.Plans[p]; k < len(ps) {
		return ps[k]
	}
	return xplan{Cost: xms}
}

func (sc xscene) clone() xscene {
	c := sc
	c.Warm = slices.Clone(sc.Warm)
	c.Readers = slices.Clone(sc.Readers)
	c.Deletes = slices.Clone(sc.Deletes)
	c.Plans = map[int][]xplan{}
	for p, ps := range sc.Plans {
		c.Plans[p] = slices.Clone(ps)
	}
	c.SlowSet = map[int]time.Duration{}
	for p, d := range sc.SlowSet {
		c.SlowSet[p] = d
	}
	return c
}

// pages returns every page the scene reads or warms, in order.
func (sc xscene) pages() []int {
	var ps []int
	for _, rd := range sc.Readers {
		ps = append(ps, rd.Page)
	}
	ps = append(ps, sc.Warm...)
	slices.Sort(ps)
	return slices.Compact(ps)
}

func (sc xscene) String() string {
	var parts []string
	if len(sc.Warm) > 0 {
		parts = append(parts, fmt.Sprintf("the warm-up stores event %s", joinInts(sc.Warm)))
	}
	for i, rd := range sc.Readers {
		s := fmt.Sprintf("reader %d: event %d at %v", i+1, rd.Page, rd.At)
		if rd.LateLook > 0 {
			s += fmt.Sprintf(", its miss held %v on the way back", rd.LateLook)
		}
		if rd.Leave > 0 {
			how := "hangs up"
			if rd.Deadline {
				how = "reaches its deadline"
			}
			s += fmt.Sprintf(", %s at %v", how, rd.At+rd.Leave)
		}
		parts = append(parts, s)
	}
	for _, p := range sc.pages() {
		ps, ok := sc.Plans[p]
		if !ok {
			continue
		}
		var ds []string
		for _, pl := range ps {
			d := pl.Cost.String()
			if pl.Fail {
				d += " (fails)"
			}
			ds = append(ds, d)
		}
		s := fmt.Sprintf("event %d's queries take %s", p, strings.Join(ds, ", then "))
		if d := sc.SlowSet[p]; d > 0 {
			s += fmt.Sprintf(", and its first write to Redis is held %v", d)
		}
		parts = append(parts, s)
	}
	for _, d := range sc.Deletes {
		if d.Page == 0 {
			parts = append(parts, fmt.Sprintf("Redis restarts empty at %v", d.At))
		} else {
			parts = append(parts, fmt.Sprintf("Redis loses event %d at %v", d.Page, d.At))
		}
	}
	return strings.Join(parts, "; ")
}

func joinInts(xs []int) string {
	var s []string
	for _, x := range xs {
		s = append(s, fmt.Sprint(x))
	}
	return strings.Join(s, ", ")
}

// xquery is one query of a scene's readers' phase.
type xquery struct {
	page, k    int
	by         int // the reader whose context it runs on, or -1
	start, end time.Duration
	ended      bool
	err        error
}

// xworld plays one scene.
type xworld struct {
	s      *scene
	sc     xscene
	byPage map[string]int // a page's text -> its event
	ctxs   []context.Context
	ends   []func()

	mu        sync.Mutex
	reading   bool          // the readers' phase has begun
	start     time.Time     // when it began, on the shop's clock
	queries   []*xquery     // the readers' phase's queries
	live      int           // queries in the database now
	failures  map[error]int // a planned failure -> its page
	removed   map[int][]time.Duration
	keys      map[int]string // page -> its key, learnt from the shop's writes
	held      map[int]bool   // readers whose miss was held
	slowDone  map[int]bool   // pages whose write was held
	hit       map[int]bool   // readers whose page was in Redis as they arrived
	noted     map[int]bool   // readers whose arrival was looked at
	back      map[int]time.Duration
	ctxErr    map[int]error
	missedAt  map[int]time.Duration // reader -> when its held miss was answered
	checked   map[string]fleet.Span
	eventDone []bool
	*explore.Record
}

// lockedNow is now for the record's stamps, which come from any goroutine.
func (x *xworld) lockedNow() time.Duration {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.now()
}

func (x *xworld) now() time.Duration {
	if x.start.IsZero() {
		return 0
	}
	return x.s.clk.Now().Sub(x.start)
}

// failure is a planned query failure: an error value of its own.
type failure struct{ page, k int }

func (f *failure) Error() string {
	return fmt.Sprintf("the database failed query %d of event %d", f.k+1, f.page)
}

// hook is the database: it counts and holds each query for its cost on the
// shop's clock (a query on a context that ends stops there, as a real one
// would), and fails it as planned.
func (x *xworld) hook(ctx context.Context, id int) error {
	x.mu.Lock()
	if !x.reading {
		x.mu.Unlock()
		return nil // the warm-up: free, and not counted
	}
	k := 0
	for _, q := range x.queries {
		if q.page == id {
			k++
		}
	}
	q := &xquery{page: id, k: k, by: explore.VisitorOf(ctx), start: x.now()}
	x.queries = append(x.queries, q)
	x.live++
	live := x.live
	failed := 0
	for _, o := range x.queries {
		if o.page == id && o.err != nil {
			failed++
		}
	}
	allowed := 1 + failed + len(x.removed[id])
	x.mu.Unlock()
	pl := x.sc.plan(id, k)
	x.Logf("query %d of event %d begins (%v%s)", k+1, id, pl.Cost, map[bool]string{true: ", will fail"}[pl.Fail])
	if live > pool {
		x.Fail("%d queries were in the database at once when event %d's began at %v, and its pool holds %d: bound the rebuilds "+
			"for the whole shop, taking a slot before the query and giving it back after", live, id, q.start, pool)
	}
	if k+1 > allowed {
		x.Fail("%s", x.again(id, k+1, allowed))
	}
	err := x.s.clk.Sleep(ctx, pl.Cost)
	if err == nil && pl.Fail {
		err = &failure{page: id, k: k}
	}
	x.mu.Lock()
	x.live--
	q.end, q.ended, q.err = x.now(), true, err
	if f := (*failure)(nil); errors.As(err, &f) {
		x.failures[err] = id
	}
	x.mu.Unlock()
	if err != nil {
		x.Logf("query %d of event %d fails: %v", k+1, id, err)
	} else {
		x.Logf("query %d of event %d lands", k+1, id)
	}
	return err
}

// again says why a page's query was one too many, in a line of story.
func (x *xworld) again(id, n, allowed int) string {
	x.mu.Lock()
	defer x.mu.Unlock()
	var at []string
	var first *xquery
	for _, q := range x.queries {
		if q.page == id {
			at = append(at, q.start.String())
			if first == nil {
				first = q
			}
		}
	}
	msg := fmt.Sprintf("event %d was queried %d times (at %s), at most %d allowed (one, plus one per failed query and per loss from Redis)",
		id, n, strings.Join(at, ", "), allowed)
	last := x.queries[len(x.queries)-1]
	switch {
	case first != nil && !first.ended:
		msg += ": two of its readers each queried it at once. Put single-flight in front of the rebuild, so that a page's readers share one query"
	case x.slowDone[id] && x.sc.SlowSet[id] > 0 && first.err == nil:
		msg += fmt.Sprintf(": its first query landed at %v and its write to Redis took %v; a reader who came meanwhile found no "+
			"flight to join and no page in Redis. A page's readers join one flight, and it stays on the table until the page is in Redis: "+
			"store the page inside the flight",
			first.end, x.sc.SlowSet[id])
	default:
		for r, at := range x.missedAt {
			if x.sc.Readers[r].Page == id && first.ended && at < first.end {
				return msg + fmt.Sprintf(": reader %d missed Redis at %v, before the first query landed at %v, and only went on after it had; "+
					"it queried again at %v. Look in Redis again once the rebuild has its database slot: another flight may have stored the page since the miss",
					r+1, at, first.end, last.start)
			}
		}
		if first.ended {
			msg += fmt.Sprintf(": its first query had landed at %v, and nothing took the page out of Redis since", first.end)
		}
	}
	return msg
}

// stage holds commands as the scene says: a reader's first miss on its way
// back, and a page's first write of the readers' phase on its way out. It
// also learns each page's key from the writes that carry the page.
func (x *xworld) stage(ctx context.Context, cmd redis.Cmder, answered bool) {
	raw := cmd.Args()
	args := make([]string, len(raw))
	for i, a := range raw {
		args[i] = fleet.ArgString(a)
	}
	name := strings.ToLower(args[0])
	if !answered {
		if fleet.ReadOnly(name) {
			return
		}
		for _, a := range args[1:] {
			p, ok := x.byPage[a]
			if !ok {
				continue
			}
			idx, _ := fleet.KeyIndexes(name, args)
			x.mu.Lock()
			if len(idx) > 0 {
				x.keys[p] = args[idx[0]]
			}
			d := x.sc.SlowSet[p]
			hold := x.reading && d > 0 && !x.slowDone[p]
			if hold {
				x.slowDone[p] = true
			}
			x.mu.Unlock()
			if hold {
				x.Logf("the write of event %d to Redis is held %v on its way", p, d)
				_ = x.s.clk.Sleep(context.Background(), d)
				x.Logf("the write of event %d reaches Redis", p)
			}
			return
		}
		return
	}
	if !fleet.ReadOnly(name) {
		for _, a := range args[1:] {
			if p, ok := x.byPage[a]; ok && cmd.Err() == nil {
				x.Logf("event %d is stored in Redis", p)
				break
			}
		}
		return
	}
	if name != "get" || !errors.Is(cmd.Err(), redis.Nil) {
		return
	}
	r := explore.VisitorOf(ctx)
	if r < 0 || r >= len(x.sc.Readers) || x.sc.Readers[r].LateLook == 0 {
		return
	}
	x.mu.Lock()
	first := !x.held[r]
	x.held[r] = true
	if first {
		x.missedAt[r] = x.now()
	}
	x.mu.Unlock()
	if first {
		d := x.sc.Readers[r].LateLook
		x.Logf("reader %d's miss of event %d is held %v on its way back", r+1, x.sc.Readers[r].Page, d)
		_ = x.s.clk.Sleep(context.Background(), d)
	}
}

// noteArrivals looks, at rest, whether the page of each reader who arrives
// at t is in Redis.
func (x *xworld) noteArrivals(ctx context.Context, t time.Duration) {
	for i, rd := range x.sc.Readers {
		x.mu.Lock()
		key, known := x.keys[rd.Page]
		due := rd.At == t && !x.noted[i]
		x.noted[i] = x.noted[i] || due
		x.mu.Unlock()
		if !due || !known {
			continue
		}
		r, err := x.s.world.Read(ctx, []string{key})
		if _, ok := r.TTL[key]; err == nil && ok {
			x.mu.Lock()
			x.hit[i] = true
			x.mu.Unlock()
		}
	}
}

// atRest checks the rules that are judged when nothing runs: readers of
// cached pages are not held, and every page key written since the last
// look has a time to live in range.
func (x *xworld) atRest(ctx context.Context) {
	x.mu.Lock()
	now := x.now()
	var waiting []int
	for i, rd := range x.sc.Readers {
		_, back := x.back[i]
		lost := slices.ContainsFunc(x.removed[rd.Page], func(at time.Duration) bool { return at > rd.At })
		if x.reading && x.hit[i] && rd.At <= now && !back && !lost {
			waiting = append(waiting, i)
		}
	}
	var names []string
	for name, sp := range x.s.tap.Wrote() {
		if x.checked[name] != sp && slices.Contains(mapValues(x.keys), name) {
			x.checked[name] = sp
			names = append(names, name)
		}
	}
	x.mu.Unlock()
	if len(waiting) > 0 {
		rd := x.sc.Readers[waiting[0]]
		where := x.s.h.Blocked()
		if where == "" {
			where = "waiting"
		}
		x.Fail("reader %d of event %d arrived at %v, when the page was in Redis, and at %v it was still inside Page (%s): "+
			"a page in Redis is served at once. Only a rebuild waits for a database slot: read Redis first, and take a slot after the miss",
			waiting[0]+1, rd.Page, rd.At, now, where)
	}
	if len(names) == 0 {
		return
	}
	slices.Sort(names)
	r, err := x.s.world.Read(ctx, names)
	if err != nil {
		return
	}
	if bad := outOfRange(lifetimes(r, x.s.tap.Wrote(), x.s.world.Embedded(), x.s.start)); len(bad) > 0 {
		x.Fail("at %v the shop had just written %s: a page lives 30 s plus a random 0 to 5 s, on every path that stores it "+
			"(the warm-up, a rebuild, a second look, a retry)", now, bad[0])
	}
}

func mapValues(m map[int]string) []string {
	var out []string
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// xevent is a moment at which the scene acts itself: a reader leaves, or
// Redis loses pages.
type xevent struct {
	at time.Duration
	do func()
}

// events returns the scene's own acts, in order.
func (x *xworld) events(ctx context.Context) []xevent {
	var evs []xevent
	for i, rd := range x.sc.Readers {
		if rd.Leave > 0 {
			evs = append(evs, xevent{at: rd.At + rd.Leave, do: func() {
				how := "hangs up"
				if rd.Deadline {
					how = "reaches its deadline"
				}
				x.Logf("reader %d %s", i+1, how)
				x.ends[i]()
			}})
		}
	}
	for _, d := range x.sc.Deletes {
		evs = append(evs, xevent{at: d.At, do: func() { x.lose(ctx, d.Page) }})
	}
	slices.SortStableFunc(evs, func(a, b xevent) int { return int(a.at - b.at) })
	return evs
}

// lose removes a page's key from Redis (or every page's, for page 0), as an
// expiry or a restart would, and counts each key that was there.
func (x *xworld) lose(ctx context.Context, page int) {
	x.mu.Lock()
	keys := map[int]string{}
	for p, k := range x.keys {
		if page == 0 || p == page {
			keys[p] = k
		}
	}
	x.mu.Unlock()
	for p, k := range keys {
		if was, err := x.s.world.Evict(ctx, k); err != nil || !was {
			continue
		}
		x.mu.Lock()
		x.removed[p] = append(x.removed[p], x.now())
		x.mu.Unlock()
		x.Logf("Redis loses event %d", p)
	}
}

// drive lets the scene run until done holds, moving the shop's clock to
// the next wake-up or act of the scene whenever the process is at rest,
// and judging the rules of rest each time.
func (x *xworld) drive(done func() bool, evs []xevent) error {
	ctx := x.s.h.Context()
	d := x.s.driver()
	d.Rest = func() error {
		if err := x.rest(); err != nil {
			return err
		}
		x.atRest(ctx)
		return nil
	}
	// The next event of the scene's, while the readers read.
	event := func() (time.Time, bool) {
		ev := slices.IndexFunc(x.eventDone, func(d bool) bool { return !d })
		if ev < 0 || !x.reading {
			return time.Time{}, false
		}
		return x.start.Add(evs[ev].at), true
	}
	d.Next = func() (time.Time, bool) {
		next, ok := x.s.clk.Next()
		if at, due := event(); due && (!ok || !at.After(next)) {
			return at, true
		}
		return next, ok
	}
	d.MoveTo = func(next time.Time) error {
		at, due := event()
		if !due || at.After(next) {
			if x.reading {
				x.noteArrivals(ctx, next.Sub(x.start))
			}
			x.s.clk.Set(next)
			return nil
		}
		t := at.Sub(x.start)
		x.noteArrivals(ctx, t)
		if at.After(x.s.clk.Now()) {
			x.s.clk.Set(at)
		}
		for i := slices.Index(x.eventDone, false); i < len(evs) && evs[i].at == t; i++ {
			x.eventDone[i] = true
			evs[i].do()
		}
		return nil
	}
	return d.Drive(done, patience)
}

// rest waits until the process is at rest. On the embedded server it
// looks as often as the scheduler lets it (harness.Quiet), since a scene
// moves its clock a few dozen times; on a real server a goroutine waiting
// for an answer looks parked, and the scene's own rest waits for the
// answers.
func (x *xworld) rest() error {
	if !x.s.world.Embedded() {
		// A goroutine a schedule point holds looks parked too: at rest,
		// it goes on (point.Release), and the process must rest again.
		for {
			if err := x.s.rest(); err != nil || !point.Release() {
				return err
			}
		}
	}
	// A process that has not come to rest within the hang bound, with
	// nothing running in the shop's lines, is a loaded machine (we saw it
	// at a load of 45 on two cores): look on, three bounds more at most.
	for try := 0; ; try++ {
		err := x.s.h.Quiet(func() bool { sent, _ := x.s.tap.InFlight(); return sent == 0 })
		var st *harness.Stuck
		if err == nil || try >= 3 || !errors.As(err, &st) || st.Looping {
			return err
		}
	}
}

// playScene plays a scene on a fresh shop and Redis.
func playScene(h *harness.H, newShop NewShop, sc xscene, story bool) explore.Played {
	x := &xworld{sc: sc, byPage: map[string]int{}, failures: map[error]int{}, removed: map[int][]time.Duration{},
		keys: map[int]string{}, held: map[int]bool{}, slowDone: map[int]bool{}, hit: map[int]bool{}, noted: map[int]bool{},
		back: map[int]time.Duration{}, ctxErr: map[int]error{}, missedAt: map[int]time.Duration{}, checked: map[string]fleet.Span{}}
	x.Record = explore.NewRecord(x.lockedNow, explore.Width(8), story)
	for _, p := range sc.pages() {
		x.byPage[events.PageOf(p)] = p
	}
	// Each reader's context also ends as soon as Page returns, as a
	// server ends a request's: a rebuild left running on it dies then.
	var hangUps []func()
	for i, rd := range sc.Readers {
		ctx, end, hangUp := explore.NewContext(i, rd.Deadline)
		x.ctxs, x.ends = append(x.ctxs, ctx), append(x.ends, end)
		hangUps = append(hangUps, hangUp)
	}
	s, err := newExploreScene(h, newShop, x)
	if err != nil {
		return explore.Played{Err: fleet.Unusable(err)}
	}
	defer s.Close()
	if s.world.Embedded() {
		defer h.CountsDecideRest()()
	}
	settle := func(err error, who string) bool {
		switch {
		case err == nil:
			return true
		case errors.Is(err, errNoBound):
			x.Fail("%s still waiting after %v of the shop's clock", who, patience)
		case x.Unrested(err):
		default:
			x.Fail("%s never finished: %v", who, err)
		}
		return false
	}
	if len(sc.Warm) > 0 {
		w := s.warm(sc.Warm)
		if !settle(x.drive(w.Done, nil), "the warm-up was") {
			return x.Played()
		}
		if o := w.Outcomes()[0]; o.Panic != "" || o.Err != nil {
			x.Fail("the warm-up of event %s failed: %v%s", joinInts(sc.Warm), o.Err, o.Panic)
			return x.Played()
		}
	}
	x.mu.Lock()
	x.reading, x.start = true, s.clk.Now()
	x.mu.Unlock()
	evs := x.events(h.Context())
	x.eventDone = make([]bool, len(evs))
	x.noteArrivals(h.Context(), 0)
	var crowd *harness.Crowd[string]
	if p := point.Running(); p != nil && story {
		// The timeline tells where the schedule held each reader.
		name := func(g int) string {
			if crowd != nil {
				if i, ok := crowd.Visitor(g); ok {
					return fmt.Sprintf("reader %d", i+1)
				}
			}
			return fmt.Sprintf("a goroutine of the shop (%d)", g)
		}
		p.Watch(func(hd point.Hold) { x.Logf("%s", hd.Describe(name)) })
	}
	crowd = s.visit(len(sc.Readers), func(_ context.Context, i int) (string, error) {
		rd := sc.Readers[i]
		_ = s.clk.Sleep(context.Background(), rd.At)
		x.Logf("reader %d asks for event %d", i+1, rd.Page)
		page, err := s.shop.Page(x.ctxs[i], rd.Page)
		ctxErr := x.ctxs[i].Err()
		hangUps[i]()
		x.mu.Lock()
		x.back[i], x.ctxErr[i] = x.now(), ctxErr
		x.mu.Unlock()
		switch {
		case err != nil:
			x.Logf("reader %d gets an error: %v", i+1, err)
		case page == events.PageOf(rd.Page):
			x.Logf("reader %d gets its page", i+1)
		default:
			x.Logf("reader %d gets %q", i+1, page)
		}
		return page, err
	})
	if settle(x.drive(crowd.Done, evs), "readers were") {
		x.judge(crowd.Outcomes())
	}
	return x.Played()
}

// newExploreScene makes a shop on a fresh world, its database and Redis
// client wired to the explorer's hooks.
func newExploreScene(h *harness.H, newShop NewShop, x *xworld) (*scene, error) {
	w, err := openWorld(h.Context(), fleet.ServerURL())
	if err != nil {
		return nil, err
	}
	t := fleet.NewTap(nil)
	t.Stage(x.stage)
	s := &scene{h: h, world: w, tap: t, clk: clock.NewFake(nine), start: time.Now()}
	x.s = s
	s.db = events.New(events.WithCost(0), events.WithClock(s.clk), events.WithHook(x.hook))
	s.shop = newShop(s.db, w.Client(s.tap), s.clk)
	return s, nil
}

// judge holds every reader's answer to rule 1.
func (x *xworld) judge(outs []harness.Outcome[string]) {
	x.mu.Lock()
	defer x.mu.Unlock()
	for i, o := range outs {
		rd := x.sc.Readers[i]
		want := events.PageOf(rd.Page)
		own := x.ctxErr[i]
		waited := x.back[i] - rd.At
		var later interface{ RetryAfter() time.Duration }
		var bad string
		switch {
		case o.Panic != "":
			bad = fmt.Sprintf("reader %d of event %d panicked: %s", i+1, rd.Page, o.Panic)
		case o.Err == nil && o.Value == want:
		case o.Err == nil:
			got := fmt.Sprintf("%q", o.Value)
			if p, ok := x.byPage[o.Value]; ok {
				got = fmt.Sprintf("the page of event %d", p)
			}
			bad = fmt.Sprintf("reader %d of event %d got %s", i+1, rd.Page, got)
		case own != nil && errors.Is(o.Err, own):
		case errors.As(o.Err, &later) && later.RetryAfter() > 0 && (waited >= hold || own != nil):
		case x.failedOf(o.Err, rd.Page):
		default:
			bad = x.wrongError(i, o.Err, own, waited)
		}
		if bad != "" {
			x.Fail("%s", bad)
		}
	}
}

// failedOf reports whether err is a planned failure of a query of page.
// The caller holds x.mu.
func (x *xworld) failedOf(err error, page int) bool {
	for f, p := range x.failures {
		if p == page && errors.Is(err, f) {
			return true
		}
	}
	return false
}

// wrongError says, in a line of story, why a reader's error is not its
// own. The caller holds x.mu.
func (x *xworld) wrongError(i int, err, own error, waited time.Duration) string {
	rd := x.sc.Readers[i]
	var later interface{ RetryAfter() time.Duration }
	switch {
	case own != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)):
		return fmt.Sprintf("reader %d of event %d left at %v (its context ended with %v), and got %q: return its own ctx.Err(); "+
			"a deadline is not a cancellation", i+1, rd.Page, rd.At+rd.Leave, own, err)
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		starter := ""
		for j, o := range x.sc.Readers {
			if j != i && o.Page == rd.Page && o.Leave > 0 {
				starter = fmt.Sprintf(" (reader %d, who left at %v)", j+1, o.At+o.Leave)
				break
			}
		}
		return fmt.Sprintf("reader %d of event %d got %q, though its own context never ended: another reader's context%s ended the "+
			"rebuild it shared. The rebuild works for every reader of the page: run it on context.WithoutCancel(ctx)", i+1, rd.Page, err, starter)
	case errors.As(err, &later):
		return fmt.Sprintf("reader %d of event %d was told to try again after %v of the shop's clock, sooner than the %v a rebuild may take: "+
			"give readers a budget of a second or so", i+1, rd.Page, waited, hold)
	}
	return fmt.Sprintf("reader %d of event %d got the error %q: the database failed no query of event %d that it could share, "+
		"and its context did not end", i+1, rd.Page, err, rd.Page)
}

// explorer returns case 8's explorer for an implementation. A scene that
// breaks an invariant is shrunk: fewer readers, warmed pages, losses and
// failures, no held commands, readers who stay, cheaper queries.
func explorer(newShop NewShop) *explore.Explorer[xscene] {
	return &explore.Explorer[xscene]{
		Case: 8, Scenes: exploreScenes,
		Draw:    drawScene,
		Play:    func(h *harness.H, sc xscene, story bool) explore.Played { return playScene(h, newShop, sc, story) },
		Smaller: candidates,
		Size:    func(sc xscene) int { return len(sc.Readers) },
		Noun:    "readers",
		Points:  true,
		Fixed:   fixedScenes(),
	}
}

// fixedScenes are the small scenes the switches check plays under every
// schedule with one switch between two of the shop's statements: each
// puts two readers of one page where a flight table looked up and
// written in two steps, or a page stored after its flight has left the
// table, lets the second reader through.
func fixedScenes() []xscene {
	one := func(cost time.Duration) map[int][]xplan { return map[int][]xplan{1: {{Cost: cost}}} }
	return []xscene{
		// Two readers of one page in a cold start, at the same instant.
		{Readers: []xreader{{Page: 1}, {Page: 1}}, Plans: one(5 * xms), SlowSet: map[int]time.Duration{}},
		// A reader who comes as the page's rebuild lands.
		{Readers: []xreader{{Page: 1}, {Page: 1, At: 5 * xms}}, Plans: one(5 * xms), SlowSet: map[int]time.Duration{}},
	}
}

// switchesInfo describes case 8's check of the fixed scenes.
var switchesInfo = check.Info{
	ID:     "switches",
	Scenes: true,
	Parts:  2, // its plays, split by order: the long pole of a check
	Name: "small scenes keep every invariant under every schedule with one switch between two of the shop's statements, " +
		"and with the goroutines taking turns one statement each " +
		"(two readers of one page in a cold start; a reader as the page's rebuild lands)",
	Catches: "a page's rebuild looked up and recorded in two steps (sync.Map's Load, then Store: wrong/syncmap-load-store), " +
		"so that two readers of a page in a cold start each query it",
}

// Switches plays the fixed scenes under every schedule with one switch
// (see explore.Explorer.Fixed).
func Switches(h *harness.H, newShop NewShop) check.Verdict { return explorer(newShop).Switches(h) }

// Explore plays exploreScenes scenes from the check's seed (or one of its
// own) and fails on the first that breaks an invariant, shrunk.
func Explore(h *harness.H, newShop NewShop) check.Verdict { return explorer(newShop).Check(h) }

func candidates(sc xscene) []xscene {
	var out []xscene
	edit := func(f func(*xscene) bool) {
		c := sc.clone()
		if f(&c) {
			out = append(out, c)
		}
	}
	for j := len(sc.Readers) - 1; j >= 0 && len(sc.Readers) > 1; j-- {
		edit(func(c *xscene) bool { c.Readers = slices.Delete(c.Readers, j, j+1); return true })
	}
	for j := range sc.Deletes {
		edit(func(c *xscene) bool { c.Deletes = slices.Delete(c.Deletes, j, j+1); return true })
	}
	for j, p := range sc.Warm {
		edit(func(c *xscene) bool {
			c.Warm = slices.Delete(c.Warm, j, j+1)
			if _, ok := c.Plans[p]; !ok {
				c.Plans[p] = []xplan{{Cost: xms}}
			}
			return true
		})
	}
	for p := range sc.SlowSet {
		edit(func(c *xscene) bool { delete(c.SlowSet, p); return true })
	}
	for j, rd := range sc.Readers {
		if rd.LateLook > 0 {
			edit(func(c *xscene) bool { c.Readers[j].LateLook = 0; return true })
		}
		if rd.Leave > 0 {
			edit(func(c *xscene) bool { c.Readers[j].Leave, c.Readers[j].Deadline = 0, false; return true })
		}
	}
	for p, ps := range sc.Plans {
		for k, pl := range ps {
			if pl.Fail {
				edit(func(c *xscene) bool { c.Plans[p][k].Fail = false; return true })
			}
		}
		if len(ps) > 1 {
			edit(func(c *xscene) bool { c.Plans[p] = c.Plans[p][:1]; return true })
		}
	}
	return out
}

// exploreStory plays the scene of a seed for `shop run 8 --seed S`: the
// scene (shrunk, when it breaks an invariant, as the check shrinks it),
// the verdict, and with timeline every event on the shop's clock.
func exploreStory(ctx context.Context, w io.Writer, newShop NewShop, pkg string, seed uint64, timeline bool) error {
	h := harness.New(ctx, pkg, harness.DefaultBound)
	sc, res, shrunk := explorer(newShop).Story(h, seed)
	if res.Err != nil {
		return &harness.FlagError{Err: res.Err}
	}
	fmt.Fprintf(w, "The explorer's scene %d", seed)
	if shrunk {
		fmt.Fprintf(w, ", shrunk to the smallest scene that still breaks an invariant")
	}
	fmt.Fprintf(w, ":\n\n")
	for _, part := range strings.Split(sc.String(), "; ") {
		fmt.Fprintf(w, "  %s\n", part)
	}
	fmt.Fprintf(w, "\n%s\n", res.Verdict())
	if timeline {
		fmt.Fprintf(w, "\nWhat happened, on the shop's clock from the readers' start:\n\n")
		for _, l := range res.Lines {
			fmt.Fprintln(w, l)
		}
	} else {
		fmt.Fprintf(w, "\nAdd --timeline to see every event on the shop's clock.\n")
	}
	return nil
}
