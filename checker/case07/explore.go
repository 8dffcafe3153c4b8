package case07

import (
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"stampede/checker/check"
	"stampede/checker/explore"
	"stampede/checker/harness"
	"stampede/shop/catalog"
)

// The explorer of case 7 plays random scenes of XFetch traffic on the
// virtual clock: one or two shelves, each filled at its own moment, read in
// a steady stream that is thin early in a list's life and dense near its
// expiry, with bursts of readers at the same instant (at random, at the
// instant a recompute lands, at the instant a list expires). Every scene
// is held to invariants that any correct answer keeps:
//
//  1. every read gets the database's list, without an error;
//  2. never two recomputes of one shelf at once;
//  3. after a shelf's first fill, no read waits (a reader that ran an early
//     recompute itself excepted, as no-wait excepts it), and none is served
//     a list past its time to live;
//  4. no recompute starts more than a computed lead G before the expiry of
//     the list it replaces.
//
// 1 and 2 are exact. 3 and 4 are about XFetch's random draws, and hold for
// a correct rule but for a chance computed from the scene's numbers: the
// traffic is dense enough near expiry that no early recompute starting in
// time has a chance below missTail per window (3), and G is set so that a
// recompute that early has a chance below earlyTail per window (4). Both
// bounds count either dating of expiry (from a query's end, or from its
// start, a list that lives one delta less). A run plays exploreScenes
// scenes of at most 2 shelves x (exploreWindows+1) windows, two bounds a
// window, so a correct answer fails the check with a chance below
// 12 * 2 * 4 * 2 * 1e-12, about 2e-10.

// The explorer's numbers.
const (
	exploreScenes  = 12
	exploreWindows = 3   // time-to-live windows after the first fill, per shelf
	exploreBeta    = 2.0 // XFetch's beta in every scene
	exploreRho     = 25  // reads per delta in the dense zone
	denseLeads     = 12  // the dense zone: the last denseLeads deltas before expiry
	sparseStep     = 2   // deltas between reads elsewhere
	missTail       = 1e-12
	earlyTail      = 1e-12
	maxBurst       = 8 // readers in a burst
	burstsPerWin   = 3 // bursts per window, at most
)

// ExploreInfo describes the explorer's check for case 7.
var ExploreInfo = check.Info{
	ID:     "explore",
	Scenes: true,
	Name:   "random scenes of traffic keep every invariant (two shelves filled at different times, bursts at expiry and as a recompute lands)",
	Catches: "bugs the steady traffic does not stage: a burst of readers at the instant a recompute lands or the list expires starting a second " +
		"recompute, one shelf's recompute or expiry leaking into another's, a list served past its time to live, recomputes far too early",
}

// xscene is one random scene of case 7.
type xscene struct {
	Seed    uint64
	Cost    time.Duration // delta: every query's cost
	TTL     time.Duration
	Shelves []string
	Offset  time.Duration // when the second shelf is first read
	Windows int
	Bursts  bool
}

// drawScene returns the scene of a seed.
func drawScene(seed uint64) xscene {
	r := rand.New(rand.NewPCG(seed, 0x7f7c4))
	cost := []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 500 * time.Millisecond, time.Second}[r.IntN(4)]
	sc := xscene{
		Seed:    seed,
		Cost:    cost,
		TTL:     time.Duration(100+r.IntN(3)*25) * cost,
		Shelves: []string{catalog.Bestsellers},
		Windows: exploreWindows,
		Bursts:  r.IntN(4) != 0,
	}
	if r.IntN(4) != 0 {
		sc.Shelves = append(sc.Shelves, []string{catalog.NewReleases, catalog.StaffPicks}[r.IntN(2)])
		// Filled later: the first shelf may be cached already, or about to expire.
		sc.Offset = time.Duration(r.IntN(int(sc.TTL/cost))) * cost
	}
	return sc
}

func (sc xscene) String() string {
	s := fmt.Sprintf("delta %s, time to live %s, beta %g; %s", secs(sc.Cost), secs(sc.TTL), exploreBeta, sc.Shelves[0])
	if len(sc.Shelves) > 1 {
		s += fmt.Sprintf(" from 0 s and %s from %s", sc.Shelves[1], secs(sc.Offset))
	}
	s += fmt.Sprintf(", %d windows each", sc.Windows)
	if sc.Bursts {
		s += ", with bursts of readers"
	}
	return s
}

// every is the gap between reads in the dense zone.
func (sc xscene) every() time.Duration { return sc.Cost / exploreRho }

// missChance bounds the chance that, in one window, no read of the dense
// zone draws an early recompute that lands before expiry, for a correct
// rule that dates expiry from the query's end (d = 0) or start (d =
// delta). Each interval of length every in the zone holds a read; the
// read is taken at the interval's worst point.
func (sc xscene) missChance() float64 {
	worst := 0.0
	db := sc.Cost.Seconds() * exploreBeta
	for _, d := range []time.Duration{0, sc.Cost} {
		logp := 0.0
		for a := d + sc.Cost; a+sc.every() <= denseLeads*sc.Cost; a += sc.every() {
			g := a + sc.every() - d // the latest point, the least likely to fire
			logp += math.Log1p(-math.Exp(-g.Seconds() / db))
		}
		worst = max(worst, math.Exp(logp))
	}
	return worst
}

// earlyLead is G: a correct rule starts a recompute more than G before the
// end-dated expiry with a chance below earlyTail per window. A window has
// at most TTL/(sparseStep*delta)+1 thin reads, the dense ones (all less
// than denseLeads deltas out), and the bursts; each at lead g fires with a
// chance at most exp(-(g-delta)/(delta*beta)).
func (sc xscene) earlyLead() time.Duration {
	reads := float64(sc.TTL/(sparseStep*sc.Cost)+1) + maxBurst*burstsPerWin
	g := 1 + exploreBeta*math.Log(reads/earlyTail)
	return time.Duration(g * float64(sc.Cost))
}

// xtraffic generates a scene's reads, looking at the recomputes so far:
// thin while a list is young, every `every` in its last denseLeads deltas,
// plus bursts.
type xtraffic struct {
	sc    xscene
	w     *world
	r     *rand.Rand
	next  []time.Time // per shelf, its next steady read
	ends  []time.Time // per shelf, when its traffic ends
	queue []event     // bursts to send, by time
	seen  int         // queries looked at for bursts
}

func newTraffic(sc xscene, w *world) *xtraffic {
	t := &xtraffic{sc: sc, w: w, r: rand.New(rand.NewPCG(sc.Seed, 0xb0b5))}
	for i := range sc.Shelves {
		start := opening
		if i == 1 {
			start = opening.Add(sc.Offset)
		}
		t.next = append(t.next, start)
		t.ends = append(t.ends, start.Add(sc.Cost+time.Duration(sc.Windows)*sc.TTL+2*sc.Cost))
	}
	return t
}

// expiry returns the end-dated expiry of the list of shelf s that a
// reader at t could be served, or false before its first fill.
func (t *xtraffic) expiry(s string, at time.Time) (time.Time, bool) {
	t.w.mu.Lock()
	defer t.w.mu.Unlock()
	var last time.Time
	ok := false
	for _, q := range t.w.queries {
		if q.shelf == s && !q.end.After(at) && (!ok || q.end.After(last)) {
			last, ok = q.end, true
		}
	}
	return last.Add(t.sc.TTL), ok
}

// burstsNow adds bursts for the recomputes begun since the last look: at
// the instant one lands, at the instant its list expires, or in the dense
// zone before that, each now and then.
func (t *xtraffic) burstsNow() {
	if !t.sc.Bursts {
		return
	}
	t.w.mu.Lock()
	qs := slices.Clone(t.w.queries[t.seen:])
	t.seen = len(t.w.queries)
	t.w.mu.Unlock()
	for _, q := range qs {
		if t.r.IntN(2) == 0 {
			t.burst(q.end, q.shelf) // as it lands
		}
		if t.r.IntN(3) == 0 {
			t.burst(q.end.Add(t.sc.TTL), q.shelf) // as its list expires
		}
		if t.r.IntN(3) == 0 {
			lead := time.Duration(t.r.IntN(denseLeads)) * t.sc.Cost
			t.burst(q.end.Add(t.sc.TTL-lead), q.shelf) // in the dense zone
		}
	}
}

func (t *xtraffic) burst(at time.Time, shelf string) {
	// Only while the shelf's stream runs: after it, nobody draws, and a
	// list left to expire is the scene's doing.
	if i := slices.Index(t.sc.Shelves, shelf); i < 0 || at.After(t.ends[i]) {
		return
	}
	for range 2 + t.r.IntN(maxBurst-1) {
		t.queue = append(t.queue, event{at: at, shelf: shelf})
	}
	slices.SortStableFunc(t.queue, func(a, b event) int { return a.at.Compare(b.at) })
}

// event returns the next read, or false when the scene is over.
func (t *xtraffic) event(int) (event, bool) {
	now := t.w.clk.Now()
	t.burstsNow()
	best := -1
	for i := range t.sc.Shelves {
		if t.next[i].After(t.ends[i]) {
			continue
		}
		if best < 0 || t.next[i].Before(t.next[best]) {
			best = i
		}
	}
	if len(t.queue) > 0 && (best < 0 || !t.queue[0].at.After(t.next[best])) && !t.queue[0].at.Before(now) {
		ev := t.queue[0]
		t.queue = t.queue[1:]
		return ev, true
	}
	for len(t.queue) > 0 && t.queue[0].at.Before(now) {
		t.queue = t.queue[1:]
	}
	if best < 0 {
		return event{}, false
	}
	s := t.sc.Shelves[best]
	at := t.next[best]
	step := t.sc.every()
	if exp, ok := t.expiry(s, at); ok {
		if zone := exp.Add(-denseLeads * t.sc.Cost); at.Before(zone) {
			step = min(sparseStep*t.sc.Cost, zone.Sub(at))
		}
	}
	t.next[best] = at.Add(step)
	return event{at: at, shelf: s}, true
}

// xresult is what a scene found: the first invariant broken, or "".
type xresult struct {
	bad   string
	stuck error
	qs    []query
	rs    []read
	sc    xscene
}

// playScene plays a scene on a new shop.
func playScene(h *harness.H, newShop New, sc xscene) xresult {
	w := newWorld(h)
	w.open(newShop, shopConfig{cost: sc.Cost, ttl: sc.TTL, beta: exploreBeta, seed: sc.Seed})
	tr := newTraffic(sc, w)
	err := w.drive(tr.event)
	if err == nil {
		err = w.finish()
	}
	qs, rs := w.snapshot()
	res := xresult{qs: qs, rs: rs, sc: sc}
	if err != nil {
		res.stuck = err
		return res
	}
	res.bad = judgeScene(sc, qs, rs)
	return res
}

// judgeScene holds a played scene to the invariants.
func judgeScene(sc xscene, qs []query, rs []read) string {
	if bad := badRead(rs); bad != "" {
		return bad
	}
	if len(qs) == 0 {
		return "no read ever reached the database: the list must come from it"
	}
	for _, s := range sc.Shelves {
		var mine []query
		for _, q := range qs {
			if q.shelf == s {
				mine = append(mine, q)
			}
		}
		if len(mine) == 0 {
			return fmt.Sprintf("%s was read and never queried: the list must come from the database", s)
		}
		if most := mostAtOnce(mine); most > 1 {
			for i, q := range mine {
				for _, o := range mine[:i] {
					if o.end.After(q.start) {
						return fmt.Sprintf("%s: a recompute started at %s while the one begun at %s was still running (until %s): two at once",
							s, clockAt(q.start), clockAt(o.start), clockAt(o.end))
					}
				}
			}
		}
		hs := history{ttl: sc.TTL, qs: mine}
		early := sc.earlyLead()
		for _, q := range mine[1:] {
			end, ok := hs.lastEnd(q.start)
			if !ok {
				continue
			}
			if lead := end.Add(sc.TTL).Sub(q.start); lead > early {
				return fmt.Sprintf("%s: a recompute started at %s, %s before its list expired (stored at %s, time to live %s); "+
					"XFetch starts one that early with a chance below %g: the rule fires far too soon",
					s, clockAt(q.start), secs(lead), clockAt(end), secs(sc.TTL), earlyTail)
			}
		}
	}
	return waits(sc, qs, rs)
}

// waits finds a read that waited after its shelf's first fill, or that
// was served a list past its time to live.
func waits(sc xscene, qs []query, rs []read) string {
	ranEarly := map[int]bool{}
	byShelf := map[string]history{}
	for _, s := range sc.Shelves {
		hs := history{ttl: sc.TTL}
		for _, q := range qs {
			if q.shelf == s {
				hs.qs = append(hs.qs, q)
			}
		}
		byShelf[s] = hs
		for _, q := range hs.qs {
			if q.by >= 0 && hs.freshAt(q.start) {
				ranEarly[q.by] = true
			}
		}
	}
	for i, r := range rs {
		hs := byShelf[r.shelf]
		if len(hs.qs) == 0 || !r.arrived.After(hs.qs[0].end) {
			continue // before or as its shelf's first fill lands: it may wait
		}
		if !r.waited() {
			if end, ok := hs.lastEnd(r.arrived); ok && r.arrived.Sub(end) > sc.TTL {
				return fmt.Sprintf("read %d of %s at %s was served the list stored at %s, %s past its %s time to live",
					i+1, r.shelf, clockAt(r.arrived), clockAt(end), secs(r.arrived.Sub(end)-sc.TTL), secs(sc.TTL))
			}
			continue
		}
		if ranEarly[i] {
			continue
		}
		why := "while its list was still fresh"
		if end, ok := hs.lastEnd(r.arrived); !ok || !r.arrived.Before(end.Add(sc.TTL)) {
			why = "on a list that had expired with no recompute landed in time"
			if end, ok := hs.lastEnd(r.arrived); ok {
				why += fmt.Sprintf(" (stored at %s, expired at %s)", clockAt(end), clockAt(end.Add(sc.TTL)))
			}
		}
		return fmt.Sprintf("read %d of %s arrived at %s and waited %s %s: after the first fill no read may wait",
			i+1, r.shelf, clockAt(r.arrived), secs(r.left.Sub(r.arrived)), why)
	}
	return ""
}

// clockAt says a scene time as seconds since the opening.
func clockAt(t time.Time) string { return secs(t.Sub(opening)) }

// explorer returns case 7's explorer for an implementation. A scene that
// breaks an invariant is shrunk to one shelf, no bursts, fewer windows; a
// smaller scene's reads and draws are not those of the big one, so a step
// is kept only if it still breaks.
func explorer(newShop New) *explore.Explorer[xscene] {
	return &explore.Explorer[xscene]{
		Case: 7, Scenes: exploreScenes,
		Each: fmt.Sprintf(", each %d windows of traffic", exploreWindows),
		Draw: drawScene,
		Play: func(h *harness.H, sc xscene, _ bool) explore.Played { return playScene(h, newShop, sc).played() },
		Smaller: func(sc xscene) []xscene {
			var out []xscene
			if len(sc.Shelves) > 1 {
				c := sc
				c.Shelves, c.Offset = sc.Shelves[:1], 0
				out = append(out, c)
			}
			if sc.Bursts {
				c := sc
				c.Bursts = false
				out = append(out, c)
			}
			if sc.Windows > 1 {
				c := sc
				c.Windows--
				out = append(out, c)
			}
			return out
		},
		// run 7 takes no --timeline: its scene story always draws.
		Untimed: true,
	}
}

// played is what the explorer's loop reads of a scene's result.
func (r xresult) played() explore.Played {
	var st *harness.Stuck
	switch {
	case errors.As(r.stuck, &st):
		return explore.Played{Stuck: st}
	case r.stuck != nil:
		return explore.Played{Bad: "the scene could not finish: " + r.stuck.Error()}
	}
	return explore.Played{Bad: r.bad}
}

// Explore plays exploreScenes scenes from the check's seed (or one of its
// own) and fails on the first that breaks an invariant, shrunk.
func Explore(h *harness.H, newShop New) check.Verdict { return explorer(newShop).Check(h) }

// exploreStory plays the scene of a seed for `shop run 7 --seed S`: the
// scene, the verdict, and every recompute with where it started in its
// window and the reads that waited.
func exploreStory(h *harness.H, w io.Writer, newShop New, seed uint64) error {
	sc, played, shrunk := explorer(newShop).Story(h, seed)
	// The scene again, for its reads and recomputes: on the virtual clock
	// a scene plays the same every time.
	res := playScene(h, newShop, sc)
	fmt.Fprintf(w, "The explorer's scene %d", seed)
	if shrunk {
		fmt.Fprintf(w, ", shrunk")
	}
	fmt.Fprintf(w, ": %s.\n", res.sc)
	fmt.Fprintf(w, "Reads come every %s in the last %d deltas before a list expires, every %s before that.\n\n",
		secs(res.sc.every()), denseLeads, secs(sparseStep*res.sc.Cost))
	fmt.Fprintln(w, played.Verdict())
	fmt.Fprintf(w, "\n%d reads. The recomputes, on the scene's clock:\n", len(res.rs))
	for _, s := range res.sc.Shelves {
		hs := history{ttl: res.sc.TTL}
		for _, q := range res.qs {
			if q.shelf == s {
				hs.qs = append(hs.qs, q)
			}
		}
		for i, q := range hs.qs {
			line := fmt.Sprintf("  %-13s %8s to %8s", s, clockAt(q.start), clockAt(q.end))
			if end, ok := hs.lastEnd(q.start); ok && i > 0 {
				line += fmt.Sprintf("   %s before its list expired", secs(end.Add(hs.ttl).Sub(q.start)))
			} else {
				line += "   the first fill"
			}
			fmt.Fprintln(w, line)
		}
	}
	var waited []string
	for i, r := range res.rs {
		if r.waited() {
			waited = append(waited, fmt.Sprintf("read %d at %s (%s)", i+1, clockAt(r.arrived), secs(r.left.Sub(r.arrived))))
		}
	}
	if len(waited) > 0 {
		fmt.Fprintf(w, "\nReads that waited: %s\n", strings.Join(waited[:min(len(waited), 20)], ", "))
	}
	return nil
}
