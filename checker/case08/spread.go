package case08

import (
	"fmt"
	"math"
	"slices"
	"time"

	"stampede/checker/fleet"
)

// The pages' times to live, and the statistics that judge their spread.
const (
	pageTTL = 30 * time.Second // the floor: no page lives less
	jitter  = 5 * time.Second  // the random part a page adds, 0 to 5 s
	// window is the slice of the expiry wave the spread check looks at: no
	// 100 ms may hold more pages than a correct draw would put there.
	window = 100 * time.Millisecond
	// grid is the step of the fixed windows the false-failure bound sums
	// over (see busiestBound).
	grid = 50 * time.Millisecond
	// falseFail is the largest chance the checker accepts of failing a
	// correct answer by bad luck.
	falseFail = 1e-6
	// minCover is how much of the 5 s the times to live must cover, from
	// the shortest to the longest. A correct uniform draw of 2,000 pages
	// leaves a gap of more than 0.5 s at the ends with a chance below
	// 2 x 0.9^2000, about 1e-91.
	minCover = 4500 * time.Millisecond
)

// lifetime is what the checker knows of one key's time to live as it was
// set: between lo and hi. On the embedded server time stands still, and lo
// and hi are both the PTTL read. On a real server Redis's clock runs: the
// write happened between its command's sending and its answer, and the
// PTTL was read between its pipeline's sending and answer, so the time to
// live as set lies between (PTTL + read sent - write answered) and (PTTL +
// read answered - write sent), give or take Redis's millisecond.
type lifetime struct {
	key     string
	lo, hi  time.Duration
	forever bool
}

// mid is the checker's best estimate of the time to live.
func (l lifetime) mid() time.Duration { return (l.lo + l.hi) / 2 }

func (l lifetime) String() string {
	if l.forever {
		return l.key + " (no time to live)"
	}
	if l.hi-l.lo < 2*time.Millisecond {
		return fmt.Sprintf("%s %s", l.key, secs3(l.mid()))
	}
	return fmt.Sprintf("%s %s to %s", l.key, secs3(l.lo), secs3(l.hi))
}

// lifetimes estimates the time to live, as set, of every key read. A key
// the tap did not see written is taken as written between since, the
// scene's start, and its reading.
func lifetimes(r fleet.Reading, writes map[string]fleet.Span, embedded bool, since time.Time) []lifetime {
	var out []lifetime
	for k, ttl := range r.TTL {
		l := lifetime{key: k, lo: ttl, hi: ttl}
		switch {
		case ttl < 0:
			l.forever = true
		case !embedded:
			read := r.At[k]
			w, ok := writes[k]
			if !ok {
				w = fleet.Span{Sent: since, Answered: read.Sent}
			}
			l.lo = ttl + read.Sent.Sub(w.Answered) - time.Millisecond
			l.hi = ttl + read.Answered.Sub(w.Sent) + time.Millisecond
		}
		out = append(out, l)
	}
	slices.SortFunc(out, func(a, b lifetime) int { return int(a.mid() - b.mid()) })
	return out
}

// precise returns the keys whose time to live the checker knows within
// fine, when there are at least half of them, and otherwise every key. On
// a real server a key whose write or reading was slow to be answered (a
// loaded machine) is known only roughly; leaving it out of the spread
// check is fair to every answer, since how long a command took says
// nothing about the jitter it carried.
func precise(ls []lifetime) []lifetime {
	const fine = 10 * time.Millisecond
	var out []lifetime
	for _, l := range ls {
		if l.hi-l.lo <= 2*fine {
			out = append(out, l)
		}
	}
	if 2*len(out) < len(ls) {
		return ls
	}
	return out
}

// outOfRange returns the keys whose time to live cannot be in [30 s, 35 s].
func outOfRange(ls []lifetime) []lifetime {
	var bad []lifetime
	for _, l := range ls {
		if l.forever || l.hi < pageTTL || l.lo > pageTTL+jitter {
			bad = append(bad, l)
		}
	}
	return bad
}

// busiest returns how many estimated times to live fall in the busiest
// window (any placement, [t, t+window)), and where it starts.
func busiest(ls []lifetime) (int, time.Duration) {
	mids := make([]time.Duration, 0, len(ls))
	for _, l := range ls {
		if !l.forever {
			mids = append(mids, l.mid())
		}
	}
	slices.Sort(mids)
	most, at := 0, time.Duration(0)
	j := 0
	for i := range mids {
		for mids[i]-mids[j] >= window {
			j++
		}
		if n := i - j + 1; n > most {
			most, at = n, mids[j]
		}
	}
	return most, at
}

// slack returns the largest half-width of the checker's estimates: 0 on the
// embedded server.
func slack(ls []lifetime) time.Duration {
	var e time.Duration
	for _, l := range ls {
		e = max(e, (l.hi-l.lo)/2)
	}
	return e
}

// busiestBound returns the most pages any window of 100 ms may hold before
// the check fails, for n pages whose estimates are each within e of the
// time to live as set. The bound is the smallest b for which a correct
// answer (each page's jitter drawn on its own, uniform over 0 to 5 s, to
// the millisecond or finer) fails with a chance below falseFail:
//
//   - a 100 ms window of estimates holds only pages whose true jitter lies
//     in an interval of 100 ms + 2e, and every such interval lies inside one
//     of the fixed windows [50j ms, 50j ms + L) with L = 150 ms + 2e;
//   - each page falls in a given fixed window with a chance of at most
//     p = (L + 1 ms) / 5 s (the 1 ms for draws in whole milliseconds), and
//     the pages fall independently, so a fixed window's count is at most
//     Binomial(n, p) in distribution;
//   - only m = (5 s + L) / 50 ms + 1 fixed windows meet [0, 5 s], so the
//     chance that any holds more than b is at most m * P(Bin(n, p) > b).
//
// For the checks' 1,000 pages on the embedded server (e = 0): p = 0.0302,
// m = 104, and the bound is 65 (the chance of a false failure is then
// below 7e-7). A correct draw puts about 20 pages in a 100 ms window on
// average, and its busiest holds about 30 to 40 (median 34, above 38 in
// one draw of 20); whole-second jitter puts about 167 in one. (For the story's 2,000 the bound would be 108.)
func busiestBound(n int, e time.Duration) (bound int, chance float64) {
	l := 150*time.Millisecond + 2*e
	p := math.Min(1, float64(l+time.Millisecond)/float64(jitter))
	m := float64((jitter+l)/grid + 1)
	for b := 0; b <= n; b++ {
		if c := m * binomialTail(n, p, b); c < falseFail {
			return b, c
		}
	}
	return n, 0
}

// binomialTail returns P(X > b) for X ~ Binomial(n, p).
func binomialTail(n int, p float64, b int) float64 {
	if b >= n {
		return 0
	}
	lp, lq := math.Log(p), math.Log1p(-p)
	lnN, _ := math.Lgamma(float64(n + 1))
	sum := 0.0
	for k := b + 1; k <= n; k++ {
		lk, _ := math.Lgamma(float64(k + 1))
		lnk, _ := math.Lgamma(float64(n - k + 1))
		sum += math.Exp(lnN - lk - lnk + float64(k)*lp + float64(n-k)*lq)
	}
	return sum
}

// secs3 formats a duration in seconds to the millisecond: "30.004 s".
func secs3(d time.Duration) string { return fmt.Sprintf("%.3f s", d.Seconds()) }
