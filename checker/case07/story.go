package case07

import (
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"stampede/checker/harness"
	"stampede/shop/catalog"
)

// story is the traffic `shop run 7` plays: the bestseller list read 100
// times a second for five minutes, a 30 s time to live, and the shop's
// 0.2 s query. (Five minutes, not more, because every one of the 30,000
// reads really calls the shop, with the race detector on, and the story
// should take well under a second.)
var story = steady{
	shop:  shopConfig{cost: catalog.QueryCost, ttl: 30 * time.Second, beta: 1, seed: 1, zeros: true},
	every: 10 * time.Millisecond,
	span:  5 * time.Minute,
}

// maxCost is the slowest query the story plays. Every reader who waits is a
// goroutine the world must watch come to rest, and a slower query makes
// more of them wait at once: at 1 s, a hundred.
const maxCost = time.Second

// Scenario plays the story on virtual time and prints what the readers
// and the database saw.
func Scenario(h *harness.H, w io.Writer, args []string, newShop New) error {
	fs := flag.NewFlagSet("run 7", flag.ContinueOnError)
	tr := story
	fs.Float64Var(&tr.shop.beta, "beta", tr.shop.beta, "XFetch's beta: larger recomputes earlier")
	// --seed means what it means for every case's story: the explorer's
	// scene of that seed. The story's own draws take --rand.
	fs.Uint64Var(&tr.shop.seed, "rand", tr.shop.seed, "the seed of the shop's random source (its XFetch draws)")
	fs.DurationVar(&tr.shop.cost, "cost", tr.shop.cost, "how long the bestseller query takes, up to "+maxCost.String())
	scene := fs.Uint64("seed", 0, "play the explorer's scene of this seed (from a failed explore check) instead of the story")
	if err := harness.ParseFlags(fs, args, w); err != nil {
		return err
	}
	seeded := false
	fs.Visit(func(f *flag.Flag) { seeded = seeded || f.Name == "seed" })
	if seeded {
		return exploreStory(h, w, newShop, *scene)
	}
	if tr.shop.cost <= 0 || tr.shop.cost > maxCost {
		return &harness.FlagError{Err: fmt.Errorf("--cost must be more than 0 and at most %v, not %v", maxCost, tr.shop.cost)}
	}
	if tr.shop.beta < 0 {
		return &harness.FlagError{Err: fmt.Errorf("--beta must be 0 or more, not %g", tr.shop.beta)}
	}
	sim := newWorld(h)
	if err := sim.play(newShop, tr); err != nil {
		return err
	}
	qs, rs := sim.snapshot()
	hs := history{ttl: tr.shop.ttl, qs: qs}

	fmt.Fprintf(w, "The bestseller list is read %d times a second for %s. It lives %s\n",
		int(time.Second/tr.every), minutes(tr.span), secs(tr.shop.ttl))
	fmt.Fprintf(w, "in the cache, and the query that rebuilds it takes %s. XFetch's beta is %g.\n",
		secs(tr.shop.cost), tr.shop.beta)
	fmt.Fprintf(w, "(The clock is virtual: %s of traffic play in a moment, the same\nway every run.)\n\n",
		minutes(tr.span))

	var filled time.Time
	if len(qs) > 0 {
		filled = qs[0].end
	}
	first, after, failed := 0, 0, 0
	var longest time.Duration
	perSecond := make([]int, int(tr.span/time.Second))
	for _, r := range rs {
		if r.err != nil || r.wrong != nil {
			failed++
		}
		if !r.waited() {
			continue
		}
		if r.arrived.Before(filled) {
			first++
		} else {
			after++
			longest = max(longest, r.left.Sub(r.arrived))
		}
		if s := int(r.arrived.Sub(opening) / time.Second); s < len(perSecond) {
			perSecond[s]++
		}
	}
	windows := int(tr.span / tr.shop.ttl)

	fmt.Fprintf(w, "  reads:              %d\n", len(rs))
	fmt.Fprintf(w, "  reads that waited:  %d after the first fill", after)
	if after > 0 {
		fmt.Fprintf(w, ", the longest %s", secs(longest))
	}
	fmt.Fprintf(w, " (and %d for the first fill)\n", first)
	fmt.Fprintf(w, "  recomputes:         %d   (one per %s window would be %d)\n", len(qs), secs(tr.shop.ttl), windows)
	if most := mostAtOnce(qs); most > 1 {
		fmt.Fprintf(w, "  most at once:       %d\n", most)
	}
	if failed > 0 {
		fmt.Fprintf(w, "  reads that failed:  %d (an error, or not the database's list)\n", failed)
	}

	fmt.Fprintf(w, "\nWhen each recompute started, in seconds after the list it replaced was stored\n")
	fmt.Fprintf(w, "(the list expires at %s; after that, readers wait):\n", strings.TrimSuffix(secs(tr.shop.ttl), " s"))
	starts(w, hs)

	fmt.Fprintf(w, "\nReads that waited, per second (one column per 5 s, showing its busiest second):\n")
	chart(w, perSecond, 5, 4)
	return nil
}

// starts prints where in its window each recompute after the first began,
// twelve to a line, the first few lines of them.
func starts(w io.Writer, hs history) {
	const perLine, lines = 12, 4
	var all []string
	for _, q := range hs.qs[min(1, len(hs.qs)):] {
		if end, ok := hs.lastEnd(q.start); ok {
			all = append(all, fmt.Sprintf("%5.1f", q.start.Sub(end).Seconds()))
		}
	}
	if len(all) == 0 {
		fmt.Fprintf(w, "  (no recompute after the first fill)\n")
	}
	for i := 0; i < len(all) && i < perLine*lines; i += perLine {
		fmt.Fprintf(w, "  %s\n", strings.Join(all[i:min(i+perLine, len(all))], " "))
	}
	if more := len(all) - perLine*lines; more > 0 {
		fmt.Fprintf(w, "  ... and %d more\n", more)
	}
}

// chart draws counts as columns of '#', each column the largest of `per`
// consecutive counts, `rows` high, with a time axis in minutes.
func chart(w io.Writer, counts []int, per, rows int) {
	cols := make([]int, (len(counts)+per-1)/per)
	top := 0
	for i, n := range counts {
		cols[i/per] = max(cols[i/per], n)
		top = max(top, n)
	}
	for r := rows; r >= 1; r-- {
		label := ""
		if r == rows {
			label = fmt.Sprint(top)
		}
		var b strings.Builder
		for _, n := range cols {
			// A column reaches row r when it is above the row below.
			if n > 0 && n*rows > (r-1)*top {
				b.WriteByte('#')
			} else {
				b.WriteByte(' ')
			}
		}
		fmt.Fprintf(w, "  %4s |%s\n", label, strings.TrimRight(b.String(), " "))
	}
	fmt.Fprintf(w, "  %4s +%s\n", "0", strings.Repeat("-", len(cols)))
	axis := []byte(strings.Repeat(" ", len(cols)+8))
	span := len(counts) / 60
	for m := 0; m <= span; m += max(1, span/5) {
		label := fmt.Sprintf("%d min", m)
		if m > 0 {
			label = fmt.Sprint(m)
		}
		at := m * 60 / per
		copy(axis[at:], label)
	}
	fmt.Fprintf(w, "        %s\n", strings.TrimRight(string(axis), " "))
}

// minutes formats a whole number of minutes in words, such as "five
// minutes".
func minutes(d time.Duration) string {
	names := []string{"no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"}
	m := int(d / time.Minute)
	name := fmt.Sprint(m)
	if m < len(names) {
		name = names[m]
	}
	if m == 1 {
		return name + " minute"
	}
	return name + " minutes"
}
