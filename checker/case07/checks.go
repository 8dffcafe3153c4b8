package case07

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"time"

	"stampede/checker/check"
	"stampede/checker/harness"
	"stampede/checker/point"
	"stampede/shop/catalog"
)

// traffic is what the steady checks play: 50 reads a second on the
// bestseller list for eight windows of a 30 s time to live, with a 1 s
// query and beta 1.
//
// The numbers give XFetch a wide margin. With r reads a second and a
// query of delta, the chance that no read has started a recompute by the
// time only delta is left before expiry (too late to finish in time) is
// about exp(-r*delta/e): here exp(-50/e), about 1e-8 per window. So any
// correct implementation, whatever order it draws its random numbers in,
// passes; and the recomputes it starts fall, on average, about
// delta*ln(r*delta), 4 s, before expiry.
var traffic = steady{
	shop:  shopConfig{cost: time.Second, ttl: 30 * time.Second, beta: 1, seed: 7},
	every: 20 * time.Millisecond,
	span:  240 * time.Second,
}

// failed turns an error from a run into a failing verdict.
func failed(err error) check.Verdict {
	return check.Failed("", "the run could not finish: "+err.Error())
}

// playTraffic plays traffic on a new shop and returns what happened.
func playTraffic(h *harness.H, newShop New) (history, []read, error) {
	w := newWorld(h)
	if err := w.play(newShop, traffic); err != nil {
		return history{}, nil, err
	}
	qs, rs := w.snapshot()
	return history{ttl: traffic.shop.ttl, qs: qs}, rs, nil
}

// history is the queries of one shop and shelf, in the order they started,
// for questions about time.
type history struct {
	ttl time.Duration
	qs  []query
}

// lastEnd returns the end of the latest query that had ended by t: when the
// list a reader could be served at t was stored.
func (hs history) lastEnd(t time.Time) (time.Time, bool) {
	var last time.Time
	found := false
	for _, q := range hs.qs {
		if !q.end.After(t) && (!found || q.end.After(last)) {
			last, found = q.end, true
		}
	}
	return last, found
}

// freshAt reports whether a list was stored and within its time to live at
// t. At the very instant of expiry it is still counted fresh, so that
// neither way of comparing times is penalised.
func (hs history) freshAt(t time.Time) bool {
	end, ok := hs.lastEnd(t)
	return ok && !t.After(end.Add(hs.ttl))
}

// badRead describes the first read that failed or got a wrong list.
func badRead(rs []read) string {
	for i, r := range rs {
		switch {
		case r.err != nil:
			return fmt.Sprintf("read %d got an error: %v", i+1, r.err)
		case r.wrong != nil:
			return fmt.Sprintf("read %d got %q, not the database's list", i+1, r.wrong)
		}
	}
	return ""
}

// NoWait checks that once the list has been stored, no reader ever waits
// for a recompute, and none is served a list past its time to live. A
// reader that ran an early recompute itself, as the paper's own version of
// XFetch does, is not waiting on a miss.
func NoWait(h *harness.H, newShop New) check.Verdict {
	hs, rs, err := playTraffic(h, newShop)
	if err != nil {
		return failed(err)
	}
	if len(hs.qs) == 0 {
		return check.Failed("", "no read ever reached the database: the list must come from it")
	}
	if bad := badRead(rs); bad != "" {
		return check.Failed("", bad)
	}
	ranEarly := map[int]bool{}
	for _, q := range hs.qs {
		if q.by >= 0 && hs.freshAt(q.start) {
			ranEarly[q.by] = true
		}
	}
	filled := hs.qs[0].end
	var total, missed, blocked, stale int
	var longest, staleBy time.Duration
	for i, r := range rs {
		if r.arrived.Before(filled) {
			continue
		}
		total++
		switch {
		case r.waited() && !ranEarly[i]:
			if hs.freshAt(r.arrived) {
				blocked++
			} else {
				missed++
			}
			longest = max(longest, r.left.Sub(r.arrived))
		case !r.waited():
			if end, ok := hs.lastEnd(r.arrived); ok && r.arrived.Sub(end) > hs.ttl {
				stale++
				staleBy = max(staleBy, r.arrived.Sub(end)-hs.ttl)
			}
		}
	}
	figure := fmt.Sprintf("%d of %d reads waited", missed+blocked, total)
	switch {
	case missed > 0:
		return check.Failed(figure, fmt.Sprintf("%d reads found the list expired and waited, the longest for %s: %s",
			missed, secs(longest), lateStarts(hs)))
	case blocked > 0:
		return check.Failed(figure, fmt.Sprintf("%d reads waited, the longest for %s, while the list was still fresh: "+
			"a reader must be served the list it finds while a recompute runs (and the recompute must outlive the "+
			"reader who started it: each read's context is cancelled the moment it returns, as a server's is, so "+
			"a recompute on it ends then)", blocked, secs(longest)))
	case stale > 0:
		return check.Failed(figure, fmt.Sprintf("%d reads were served the list after its %s time to live had run out, by up to %s: "+
			"the list must be recomputed before it expires, not served stale", stale, secs(hs.ttl), secs(staleBy)))
	}
	return check.Passed(figure)
}

// lateStarts says why lists expired under their readers: no recompute had
// started, or one had but too late to finish.
func lateStarts(hs history) string {
	none, late := 0, 0
	var closest time.Duration = -1
	for i, q := range hs.qs {
		if i == 0 {
			continue
		}
		end, ok := hs.lastEnd(q.start)
		if !ok {
			continue
		}
		left := end.Add(hs.ttl).Sub(q.start)
		switch cost := q.end.Sub(q.start); {
		case left <= 0:
			none++
		case left < cost:
			late++
			closest = max(closest, left)
		}
	}
	switch {
	case late > 0:
		return fmt.Sprintf("%d recomputes started too late to finish before expiry (the earliest %s before it, for a %s query); "+
			"is delta measured on the shop's clock, each time?", late, secs(closest), secs(traffic.shop.cost))
	case none > 0:
		return fmt.Sprintf("%d times the list expired with no recompute under way, and the readers of that moment waited for one", none)
	}
	return "the list expired before a recompute replaced it"
}

// PerWindow checks that the list is recomputed about once per time to
// live: not much more (early recomputes piling up), and not less (a list
// kept past its time to live).
func PerWindow(h *harness.H, newShop New) check.Verdict {
	hs, _, err := playTraffic(h, newShop)
	if err != nil {
		return failed(err)
	}
	windows := int(traffic.span / traffic.shop.ttl)
	n := len(hs.qs)
	figure := fmt.Sprintf("%d recomputes in %d windows of %s; one per window is %d", n, windows, secs(traffic.shop.ttl), windows)
	// XFetch recomputes a few seconds before expiry, so a little more
	// than once per window: about 10 here. Half as many again is far more
	// than any correct rule makes.
	switch {
	case n > windows*3/2:
		return check.Failed(figure, fmt.Sprintf("early recomputes are starting far more often than needed%s", burstNote(hs)))
	case n < windows*3/4:
		return check.Failed(figure, fmt.Sprintf("the list is being kept past its %s time to live", secs(traffic.shop.ttl)))
	}
	return check.Passed(figure)
}

// burstNote says whether the recomputes came many at a time.
func burstNote(hs history) string {
	if most := mostAtOnce(hs.qs); most > 1 {
		return fmt.Sprintf(", up to %d at the same time", most)
	}
	return ""
}

// Late checks that recomputes start late in the time-to-live window: the
// median start is in the second half of the window.
func Late(h *harness.H, newShop New) check.Verdict {
	hs, _, err := playTraffic(h, newShop)
	if err != nil {
		return failed(err)
	}
	var into []time.Duration // how far into its window each recompute started
	for _, q := range hs.qs[min(1, len(hs.qs)):] {
		if end, ok := hs.lastEnd(q.start); ok {
			into = append(into, q.start.Sub(end))
		}
	}
	if len(into) == 0 {
		return check.Failed("no recompute", fmt.Sprintf("in %s of traffic the list was never recomputed after the first fill",
			secs(traffic.span)))
	}
	slices.Sort(into)
	median := into[len(into)/2]
	figure := fmt.Sprintf("the median recompute started %s into the %s window", secs(median), secs(hs.ttl))
	// XFetch's head start is drawn afresh: the recomputes of the windows
	// start at points spread over about a second (delta), the reads 20 ms
	// apart. A head start that is the same in every window (u drawn once,
	// or no draw at all) puts them all at one point. A right rule puts two
	// windows' recomputes in the same 20 ms slot with a chance of about 1
	// in 50, so all of four or more with a chance below 1e-6.
	// (A shop that never recomputes early starts each at expiry, the same
	// point too; no-wait tells it so.)
	if len(into) >= 4 && into[0] == into[len(into)-1] && into[0] < hs.ttl {
		return check.Failed(figure+"; every one at the same point", fmt.Sprintf("all %d recomputes after the first fill "+
			"started exactly %s into their window: the head start is the same every time. Draw u afresh on every read, "+
			"from the random source New is given", len(into), secs(into[0])))
	}
	if median < hs.ttl/2 {
		return check.Failed(figure, fmt.Sprintf("half the recomputes started within %s of the list being stored; "+
			"XFetch's chance is exp(-(time left)/(delta*beta)), tiny until the last few deltas before expiry. "+
			"Check the sign of the rule, and that u is never 0 (ln 0 is minus infinity)", secs(median)))
	}
	fired, err := probe(h, newShop, zeroDraw, zeroShops, zeroLeft, true)
	if err != nil {
		return failed(err)
	}
	if fired > 0 {
		return check.Failed(fmt.Sprintf("%s; a draw of 0 started %d of %d recomputes %s before expiry", figure, fired, zeroShops, secs(zeroLeft)),
			fmt.Sprintf("each of %d shops, with a %s query, was read %s before expiry, and the read's draw was exactly 0. "+
				"XFetch's chance there is exp(-%s/%s), which is 0 even in floating point, yet %d of them recomputed: "+
				"with u = 0, ln(u) is minus infinity and the head start infinite. random() can return 0: take u = 1 - random(), "+
				"which is in (0, 1], or draw again on a 0 (written as u < exp(-g/(delta*beta)), compare with <, not <=)",
				zeroShops, secs(zeroDraw.cost), secs(zeroLeft), secs(zeroLeft), secs(zeroDraw.cost), fired))
	}
	return check.Passed(figure + "; a draw of 0 far from expiry started none")
}

// The zero probe of Late: zeroShops shops with a 0.01 s query, each read
// once zeroLeft before expiry with a draw of exactly 0. There g/(delta*beta)
// is 2000 and XFetch's chance exp(-2000) is 0 even in floating point, so no
// rule that is right for every u in (0, 1] fires, nor u < exp(...) with u
// = 0: whatever its arithmetic, a recompute here came from ln(0). (The
// steady traffic draws no 0, see source.) A rule that converts an infinite
// head start to a time.Duration gets an implementation-dependent value:
// on amd64 the minimum int64, a head start that never fires, which
// behaves like u = 1 and cannot be told from a right rule by what it does.
const (
	zeroShops = 5
	zeroLeft  = 20 * time.Second
)

var zeroDraw = shopConfig{cost: 10 * time.Millisecond, ttl: 30 * time.Second, beta: 1, seed: 17}

// The probes of Delta and Beta: probes shops, each filled once with its own
// database, and each read once at probeLeft before expiry. At time left g
// one read recomputes with chance exp(-g/(delta*beta)), so the count of
// recomputes among the probes measures the rule directly.
const (
	probes    = 200
	probeLeft = 2 * time.Second
	// tail bounds the chance that a correct rule's count falls below the
	// lower bound, and again above the upper one, for one probe. A check
	// compares two probes, so it fails a correct rule with a chance below
	// 4*tail = 8e-7 (see bounds).
	tail = 2e-7
)

// probe returns how many of n probe reads, each on a shop of its own made
// with cfg, start a recompute when read once with left to go before
// expiry. Every probe of a configuration draws from one source seeded
// alike, so that a rule that ignores what changed between two
// configurations gives the same count for both. With zero set, the first
// draw of every probe read is exactly 0.
func probe(h *harness.H, newShop New, cfg shopConfig, n int, left time.Duration, zero bool) (int, error) {
	src := newSource(cfg.seed, false)
	randoms := make([]func() float64, n)
	for i := range randoms {
		randoms[i] = src.draw
	}
	var before func()
	if zero {
		before = src.zeroNext // the driver sends the read right after this
	}
	return probeWith(h, newShop, cfg, left, randoms, before)
}

// probeWith is probe with a shop for each of randoms, each drawing from
// its own: it returns how many of them start a recompute when read once
// with left to go before expiry. before, when set, runs just before each
// read is sent.
func probeWith(h *harness.H, newShop New, cfg shopConfig, left time.Duration, randoms []func() float64, before func()) (int, error) {
	n := len(randoms)
	w := newWorld(h)
	for _, random := range randoms {
		w.openWith(newShop, cfg, random)
	}
	fill := harness.Visit(h, n, func(ctx context.Context, i int) (struct{}, error) {
		_, err := w.shops[i].Top(ctx, catalog.Bestsellers)
		return struct{}{}, err
	})
	err := fill.Settle()
	if err == nil {
		err = w.until(opening.Add(cfg.cost))
	}
	if err == nil {
		err = fill.Wait()
	}
	if err != nil {
		return 0, err
	}
	for _, o := range fill.Outcomes() {
		if o.Panic != "" || o.Err != nil {
			return 0, fmt.Errorf("a reader filling the cache failed: %v%s", o.Err, o.Panic)
		}
	}
	at := opening.Add(cfg.cost + cfg.ttl - left)
	if err := w.until(at); err != nil {
		return 0, err
	}
	err = w.drive(func(i int) (event, bool) {
		if before != nil && i < n {
			before()
		}
		return event{at: at, shop: i, shelf: catalog.Bestsellers}, i < n
	})
	if err != nil {
		return 0, err
	}
	qs, _ := w.snapshot()
	fired := 0
	for _, q := range qs {
		if q.start.Equal(at) {
			fired++
		}
	}
	return fired, w.finish()
}

// chance is XFetch's chance that one read with probeLeft to go recomputes.
func chance(cfg shopConfig) float64 { return chanceAt(cfg, probeLeft) }

// chanceAt is XFetch's chance that one read with left to go recomputes:
// exp(-left/(delta*beta)).
func chanceAt(cfg shopConfig, left time.Duration) float64 {
	return math.Exp(-left.Seconds() / (cfg.cost.Seconds() * cfg.beta))
}

// chanceFromStart is the same for a shop that dates a list's expiry from
// when its query began rather than when it ended (a list that lives a
// query's length less, which is a fair choice): its time left at the probe
// is one delta shorter, and with none left every probe read misses and
// queries.
func chanceFromStart(cfg shopConfig) float64 {
	g := probeLeft - cfg.cost
	if g <= 0 {
		return 1
	}
	return math.Exp(-g.Seconds() / (cfg.cost.Seconds() * cfg.beta))
}

// within reports whether a probe's count fits a correct rule with either
// dating of expiry, and says which range it fits when it is the second.
func within(n int, cfg shopConfig) (ok bool, note string) {
	lo, hi := bounds(probes, chance(cfg))
	if n >= lo && n <= hi {
		return true, ""
	}
	lo, hi = bounds(probes, chanceFromStart(cfg))
	if n >= lo && n <= hi {
		return true, fmt.Sprintf(" (%d fits %d to %d, for a list whose life is counted from its query's start)", n, lo, hi)
	}
	return false, ""
}

// bounds returns the range a correct rule's count of recomputes among the
// probes falls in, but for a chance below tail on each side. The count of a
// correct rule is binomial: probes reads, each firing with chance p,
// independently, whatever order the rule draws its numbers in. lo is the
// largest k with P(X < k) <= tail and hi the smallest with P(X > hi) <=
// tail. For the probes' chances, exp(-2) and exp(-1/2), they are 6 to 54
// (expected 27) and 86 to 155 (expected 121); a rule that draws the same u
// for every read gives 0 or 200, and one that ignores delta or beta gives
// the same count for both.
func bounds(n int, p float64) (lo, hi int) {
	if p >= 1 {
		return n, n
	}
	pmf := func(k int) float64 {
		lg := func(x int) float64 { v, _ := math.Lgamma(float64(x) + 1); return v }
		return math.Exp(lg(n) - lg(k) - lg(n-k) + float64(k)*math.Log(p) + float64(n-k)*math.Log1p(-p))
	}
	below := 0.0 // P(X < lo)
	for lo = 0; lo < n && below+pmf(lo) <= tail; lo++ {
		below += pmf(lo)
	}
	above := 0.0 // P(X > hi)
	for hi = n; hi > 0 && above+pmf(hi) <= tail; hi-- {
		above += pmf(hi)
	}
	return lo, hi
}

// compare probes two configurations that differ in one thing and checks
// that each count is within the bounds XFetch's chance gives it (for either
// dating of expiry, see chanceFromStart: that only widens what passes, so
// a correct rule still fails with a chance below 4*tail). Between
// the two bounds there is no overlap, so a rule that ignores the
// difference cannot pass both, and a rule whose draws do not vary (every
// read deciding the same way) gives 0 or all of them.
func compare(h *harness.H, newShop New, a, b shopConfig, label func(shopConfig) string, why string) check.Verdict {
	na, err := probe(h, newShop, a, probes, probeLeft, false)
	if err != nil {
		return failed(err)
	}
	nb, err := probe(h, newShop, b, probes, probeLeft, false)
	if err != nil {
		return failed(err)
	}
	loA, hiA := bounds(probes, chance(a))
	loB, hiB := bounds(probes, chance(b))
	figure := fmt.Sprintf("%s before expiry, %d of %d reads recompute with %s and %d with %s; "+
		"exp(-g/(delta*beta)) says %d to %d and %d to %d",
		secs(probeLeft), na, probes, label(a), nb, label(b), loA, hiA, loB, hiB)
	inA, noteA := within(na, a)
	inB, noteB := within(nb, b)
	if inA && inB {
		return check.Passed(figure + noteA + noteB)
	}
	msg := why
	switch {
	case na == 0 && nb == 0:
		msg = "no read recomputed early at all. " + why + " (If your rule does fire near expiry: draw from the random source " +
			"New is given, afresh for each read.)"
	case na == nb:
		msg = "the same number recompute either way. " + why
	case (na == 0 || na == probes) && (nb == 0 || nb == probes):
		msg = "every read of a configuration decided the same way, all recompute or none: draw u afresh for each read, " +
			"uniform, so that each read recomputes with chance exp(-g/(delta*beta))."
	case !inA && !inB:
		msg = "neither count is near what XFetch's chance gives. " + why
	case !inA:
		msg = fmt.Sprintf("with %s, %d reads recomputed where the chance exp(-g/(delta*beta)) gives %d to %d: "+
			"the head start is delta*beta*(-ln u), u uniform in (0, 1].", label(a), na, loA, hiA)
	default:
		msg = fmt.Sprintf("with %s, %d reads recomputed where the chance exp(-g/(delta*beta)) gives %d to %d. ",
			label(b), nb, loB, hiB) + why
	}
	return check.Failed(figure, msg)
}

// Delta checks that delta is measured: with a slower query, more reads at
// the same time before expiry start a recompute. Then it checks that
// delta is the shelf's own: a slow shelf read after a fast shelf's
// recompute still draws with its own delta (see shelfDelta).
func Delta(h *harness.H, newShop New) check.Verdict {
	fast := shopConfig{cost: time.Second, ttl: 30 * time.Second, beta: 1, seed: 11}
	slow := fast
	slow.cost = 4 * time.Second
	v := compare(h, newShop, fast, slow,
		func(c shopConfig) string { return "a " + secs(c.cost) + " query" },
		"A slower query needs a longer head start: delta must be how long the last recompute took, measured on the shop's clock and stored with the list.")
	if !v.Pass {
		return v
	}
	return shelfDelta(h, newShop, v)
}

// Beta checks that beta is honoured: with a larger beta, more reads at the
// same time before expiry start a recompute.
func Beta(h *harness.H, newShop New) check.Verdict {
	one := shopConfig{cost: time.Second, ttl: 30 * time.Second, beta: 1, seed: 13}
	four := one
	four.beta = 4
	return compare(h, newShop, one, four,
		func(c shopConfig) string { return fmt.Sprintf("beta %g", c.beta) },
		"A larger beta must start recomputes earlier: the head start is delta*beta*(-ln u).")
}

// OneFlight checks that a key never has two recomputes at once: in steady
// traffic, when 50 readers arrive together just before expiry, when nearly
// every one of them draws an early recompute, and when readers keep coming
// after expiry while that recompute is still in flight.
//
// The 50 readers start together: the first draw of the burst is held, on
// the goroutine that draws, until the other readers have all arrived and
// the process is at rest, and then let go with the scheduler on one
// processor. So a shop that marks its recompute as in flight only once the
// recompute's own goroutine runs is seen when the readers woken first
// decide before that goroutine does. Under the race detector the runtime
// decides that order by a coin (it randomizes which ready goroutine runs
// next), and the shop is seen in about half the bursts; so the burst is
// played Bursts times on fresh shops, and such a shop passes them all with
// a chance of about 2^-Bursts. A shop that marks the flight under its lock
// starts one recompute in every burst, whatever the coin says.
func OneFlight(h *harness.H, newShop New) check.Verdict {
	hs, rs, err := playTraffic(h, newShop)
	if err != nil {
		return failed(err)
	}
	steadyMost := mostAtOnce(hs.qs)
	burst, after := 0, 0
	for i := range Bursts {
		burst, after, err = burstAtExpiry(h, newShop, i == 0)
		if err != nil {
			return failed(err)
		}
		if burst > 1 || after > 1 {
			break
		}
	}
	figure := fmt.Sprintf("at most %d at once in steady traffic; 50 readers just before expiry started %d, "+
		"and with 20 more after expiry at most %d ran at once", steadyMost, burst, after)
	switch {
	case steadyMost > 1:
		return check.Failed(figure, fmt.Sprintf("%d recomputes of the list ran at the same time: a reader who draws an early recompute "+
			"while one is in flight, or finds the list missing, must not start another", steadyMost))
	case burst > 1:
		return check.Failed(figure, "50 readers arrived together 0.05 s before expiry, when nearly every draw says recompute: "+
			"only the first may start one, and the rest must see that it is in flight. Mark the recompute as in flight "+
			"under the lock, in the reader that decides, before it starts the goroutine: a flag the goroutine sets "+
			"itself leaves a gap in which other readers decide too")
	case after > 1:
		return check.Failed(figure, "an early recompute was in flight when the list expired, and readers who then found "+
			"the list expired started another query instead of waiting for that one: a miss must join the recompute "+
			"in flight, whoever started it")
	}
	if bad := badRead(rs); bad != "" {
		return check.Failed(figure, bad)
	}
	most := 0
	for _, reverse := range []bool{false, true} {
		n, v := lockstepBurst(h, newShop, reverse)
		if !v.Pass {
			return v
		}
		most = max(most, n)
		if n > 1 {
			return check.Failed(fmt.Sprintf("two readers drawing at one instant in lockstep started %d", n), fmt.Sprintf(
				"two readers arrived together 0.05 s before expiry, both drew an early recompute, and took turns one "+
					"statement each: they started %d recomputes of the list. Each looked for a recompute in flight, and "+
					"each started its own in a later step: both looked before either started. Look and start in one "+
					"critical section (under the write lock, look again before you start)", n))
		}
	}
	return check.Passed(figure + fmt.Sprintf(" (%d bursts; and two readers drawing at one instant in lockstep started %s)",
		Bursts, map[int]string{0: "none", 1: "one"}[most]))
}

// lockstepBurst is OneFlight's scene of two readers who draw an early
// recompute at one instant: the list is filled, and 0.05 s before it
// expires two readers arrive together, both draws fire (one half each), and
// the two take turns one statement each (point.Lockstep). It returns how
// many recomputes they started: one is right. It catches a reader that
// looks for a recompute in flight in one critical section and starts its
// own in the next (c07-launch-no-relook): in lockstep both look before
// either starts, which a burst on real processors opens only by chance.
func lockstepBurst(h *harness.H, newShop New, reverse bool) (int, check.Verdict) {
	w := newWorld(h)
	cfg := traffic.shop
	k, src := w.openSource(newShop, cfg)
	err := w.drive(func(i int) (event, bool) { return event{at: opening, shop: k, shelf: catalog.Bestsellers}, i < 1 })
	if err == nil {
		err = w.finish()
	}
	at := opening.Add(cfg.cost + cfg.ttl - cfg.cost/20)
	if err == nil {
		err = w.until(at)
	}
	if err != nil {
		return 0, failed(err)
	}
	before := len(w.queriesSoFar())
	// A draw of one half fires with a twentieth of a query left, whether
	// the shop takes the logarithm of the draw or of one minus it.
	src.fixNext(2, 0.5)
	var c *harness.Crowd[[]string]
	v := h.Under(point.Lockstep(reverse), func() check.Verdict {
		c = harness.Visit(h, 2, func(ctx context.Context, _ int) ([]string, error) {
			return w.shops[k].Top(ctx, catalog.Bestsellers)
		})
		if err := c.Settle(); err != nil {
			return failed(err)
		}
		if err := w.rest(); err != nil {
			return failed(err)
		}
		return check.Passed("")
	})
	if !v.Pass {
		return 0, v
	}
	started := len(w.queriesSoFar()) - before
	if err := w.until(at.Add(2 * cfg.cost)); err != nil {
		return 0, failed(err)
	}
	if err := c.Wait(); err != nil {
		return 0, failed(err)
	}
	if p := c.Panicked(); p != "" {
		return 0, failed(fmt.Errorf("a reader's call panicked: %s", p))
	}
	return started, check.Passed("")
}

// Bursts is how many times OneFlight plays its burst at expiry: a shop
// whose second recompute depends on the race detector's coin passes them
// all with a chance of about 2^-20, below one in a million.
const Bursts = 20

// burstAtExpiry fills a fresh shop, sends 50 readers together 0.05 s
// before the list expires, then, if past is set, 10 at a quarter and 10 at
// half a query past expiry (what those find does not depend on the coin,
// so once is enough). It returns how many recomputes the 50 started and
// the most that ran at once from then on.
func burstAtExpiry(h *harness.H, newShop New, past bool) (burst, after int, err error) {
	w := newWorld(h)
	cfg := traffic.shop
	k, src := w.openSource(newShop, cfg)
	err = w.drive(func(i int) (event, bool) { return event{at: opening, shop: k, shelf: catalog.Bestsellers}, i < 1 })
	if err == nil {
		err = w.finish()
	}
	if err != nil {
		return 0, 0, err
	}
	expiry := opening.Add(cfg.cost + cfg.ttl)
	at := expiry.Add(-cfg.cost / 20)
	if err := w.until(at); err != nil {
		return 0, 0, err
	}
	before := len(w.queriesSoFar())
	reached, release := src.holdNext()
	defer release()
	var crowds []*harness.Crowd[[]string]
	visit := func(n int) error {
		c := harness.Visit(h, n, func(ctx context.Context, _ int) ([]string, error) {
			return w.shops[k].Top(ctx, catalog.Bestsellers)
		})
		crowds = append(crowds, c)
		return c.Settle()
	}
	err = visit(50)
	if err == nil {
		select {
		case <-reached:
			procs := runtime.GOMAXPROCS(1)
			release()
			err = w.rest()
			runtime.GOMAXPROCS(procs)
		default:
			release() // nobody drew
		}
	}
	if err != nil {
		return 0, 0, err
	}
	burst = len(w.queriesSoFar()) - before
	// Past expiry, with the recompute still in flight: these readers must
	// wait for it, not start another.
	for _, d := range []time.Duration{cfg.cost / 4, cfg.cost / 2} {
		if !past {
			break
		}
		if err := w.until(expiry.Add(d)); err != nil {
			return 0, 0, err
		}
		if err := visit(10); err != nil {
			return 0, 0, err
		}
	}
	scene := w.queriesSoFar()[before:]
	if err := w.until(at.Add(2 * cfg.cost)); err != nil {
		return 0, 0, err
	}
	for _, c := range crowds {
		if err := c.Wait(); err != nil {
			return 0, 0, err
		}
		if p := c.Panicked(); p != "" {
			return 0, 0, fmt.Errorf("a reader's call panicked: %s", p)
		}
	}
	// After expiry a reader may start the recompute if none runs (a shop
	// that does not refresh early); it must not start a second one.
	return burst, mostAtOnce(scene), nil
}

// queriesSoFar returns the queries so far.
func (w *world) queriesSoFar() []query {
	qs, _ := w.snapshot()
	return qs
}

// mostAtOnce returns the most queries of one shelf of one shop that ran at
// the same time.
func mostAtOnce(qs []query) int {
	most := 0
	for _, q := range qs {
		n := 0
		for _, o := range qs {
			if o.shop == q.shop && o.shelf == q.shelf && !o.start.After(q.start) && o.end.After(q.start) {
				n++
			}
		}
		most = max(most, n)
	}
	return most
}

// Busy runs readers on three shelves at once, cold, near expiry while
// recomputes start and finish, and after expiry, so that the race detector
// sees every access to the shop's shared state. Its verdict is the race
// detector's; it fails here only if the readers hang or panic.
func Busy(h *harness.H, newShop New) check.Verdict {
	w := newWorld(h)
	cfg := traffic.shop
	k := w.open(newShop, cfg)
	shelves := []string{catalog.Bestsellers, catalog.NewReleases, catalog.StaffPicks}
	var crowds []*harness.Crowd[[]string]
	burst := func() *harness.Crowd[[]string] {
		c := harness.Visit(h, 30, func(ctx context.Context, i int) ([]string, error) {
			return w.shops[k].Top(ctx, shelves[i%len(shelves)])
		})
		crowds = append(crowds, c)
		return c
	}
	settle := func() error { return h.Quiet(func() bool { return true }) }
	steps := []func() error{
		// Cold: every shelf misses at once.
		func() error { burst(); return settle() },
		func() error { return w.until(opening.Add(cfg.cost)) },
		// Near expiry: early recomputes start, and readers keep reading.
		func() error { return w.until(opening.Add(cfg.cost + cfg.ttl - cfg.cost/2)) },
		func() error { burst(); return settle() },
		func() error { burst(); return settle() },
		// The recomputes store their lists while more readers read.
		func() error {
			next, ok := w.clk.Next()
			if ok {
				w.clk.Set(next)
			}
			burst()
			return settle()
		},
		// Long after expiry: misses again.
		func() error { return w.until(w.clk.Now().Add(3 * cfg.ttl)) },
		func() error { burst(); return settle() },
		func() error { return w.until(w.clk.Now().Add(cfg.cost)) },
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return failed(err)
		}
	}
	for _, c := range crowds {
		if err := c.Wait(); err != nil {
			return failed(err)
		}
		if p := c.Panicked(); p != "" {
			return check.Failed("", "a reader's call panicked: "+p)
		}
	}
	return check.Passed("")
}

// secs formats a duration in seconds, such as "1.00 s".
func secs(d time.Duration) string {
	s := fmt.Sprintf("%.2f", d.Seconds())
	s = strings.TrimSuffix(strings.TrimRight(s, "0"), ".")
	return s + " s"
}
