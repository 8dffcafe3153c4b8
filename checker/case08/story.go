package case08

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"stampede/checker/fleet"
	"stampede/checker/harness"
	"stampede/shop/clock"
	"stampede/shop/events"
)

// The story's figures, from the seed: 2,000 event pages, a pool of 20, a
// database that expects 3 rebuilds a second; and each page with two readers
// when Redis comes back empty.
const (
	// storyPages is how many event pages the box office has.
	storyPages = 2000
	// The cold start's readers come in waves, every waveEvery: each wave
	// has a reader for each of its waveSize pages, and a second reader for
	// the first waveTwice of them. (All 2,000 at once would be more
	// goroutines than the race detector allows a shop that starts a few of
	// its own per reader.)
	waveSize      = 100
	waveTwice     = 25
	waveEvery     = 50 * time.Millisecond
	expectedRate  = 3
	chartFrom     = 29 * time.Second
	chartTo       = 37 * time.Second
	chartRows     = 6
	storyPatience = 10 * time.Minute
)

// Scenario plays the story on the code under test. First the warm-up
// stores every page, and the checker reads each page's time to live from
// Redis: the expiry wave is when they end, each page rebuilt by its next
// reader. Then Redis restarts empty, and every page has readers at once: the
// cold start, played on a virtual clock with the database's 8 ms query, so
// that its figures are the same on every run.
func Scenario(ctx context.Context, w io.Writer, args []string, pkg string, newShop NewShop) error {
	fs := flag.NewFlagSet("run 8", flag.ContinueOnError)
	n := fs.Int("pages", storyPages, "how many event pages the warm-up stores")
	var sf fleet.StoryFlags
	if err := sf.Parse(ctx, fs, args, w); err != nil {
		return err
	}
	if sf.Seed != 0 {
		return exploreStory(ctx, w, newShop, pkg, sf.Seed, sf.Timeline)
	}
	if err := harness.Positive("pages", *n); err != nil {
		return err
	}
	h := harness.New(ctx, pkg, harness.DefaultBound)

	wave, where, err := playWarmUp(h, sf.URL, newShop, *n)
	if err != nil {
		return err
	}
	cs, err := playColdStart(h, sf.URL, newShop, *n)
	if err != nil {
		return err
	}

	fmt.Fprintf(w, "At deploy, the warm-up stores %d event pages in Redis, all in the same moment.\n", *n)
	fmt.Fprintf(w, "Each page's next reader rebuilds it once its time to live ends.\n")
	fmt.Fprintf(w, "Redis: %s", where)
	if sf.URL == "" {
		fmt.Fprintf(w, " (--redis redis://HOST:PORT/DB, or %s, for a real server)", fleet.URLVar)
	}
	fmt.Fprint(w, "\n\n")
	fmt.Fprintf(w, "The expiry wave:\n")
	fmt.Fprintf(w, "  pages stored:               %d\n", len(wave))
	if len(wave) > 0 {
		fmt.Fprintf(w, "  times to live:              %s to %s\n", secs1(wave[0]), secs1(wave[len(wave)-1]))
	}
	fmt.Fprintf(w, "  busiest second:             %d rebuilds   (the database expects %d a second)\n", most(wave, time.Second), expectedRate)
	busiest := fmt.Sprintf("%d rebuilds", most(wave, 100*time.Millisecond))
	if col := busiestColumn(wave); col != most(wave, 100*time.Millisecond) {
		// The chart counts fixed columns; any 100 ms may straddle two.
		busiest += fmt.Sprintf("   (any 100 ms; the chart's fixed columns reach %d)", col)
	}
	fmt.Fprintf(w, "  busiest 100 ms:             %s\n", busiest)
	// Each page's next reader rebuilds it as it expires, and a query takes
	// events.QueryCost: the most queries the database runs at once is the
	// most expiries within one query's time.
	fmt.Fprintf(w, "  most queries at once:       %d   (pages expiring within one %v query of each other)\n", most(wave, events.QueryCost), events.QueryCost)
	fmt.Fprintf(w, "\nRebuilds per 100 ms, %d to %d s after the warm-up:\n", int(chartFrom.Seconds()), int(chartTo.Seconds()))
	chart(w, wave)

	fmt.Fprintf(w, "\nThen Redis restarts empty: a cold start. Readers come in waves %v apart, each wave\n", waveEvery)
	fmt.Fprintf(w, "%d readers of %d pages that nobody has read yet, until all %d pages have had readers.\n", waveSize+waveTwice, waveSize, *n)
	fmt.Fprintf(w, "A query takes %v. (The clock is virtual: the same figures every run.)\n", events.QueryCost)
	fmt.Fprintf(w, "  queries:                    %d   (one per page would be %d)\n", cs.queries, *n)
	fmt.Fprintf(w, "  pages queried more than once: %d\n", cs.repeated)
	fmt.Fprintf(w, "  most queries at once:       %d   (the database's pool holds %d)\n", cs.most, events.Pool)
	fmt.Fprintf(w, "  readers served:             %d of %d, the last after %s\n", cs.served, cs.readers, secs2(cs.last))
	fmt.Fprintf(w, "  readers told to try again:  %d\n", cs.tryAgain)
	if cs.failed > 0 {
		fmt.Fprintf(w, "  other errors:               %d (%v)\n", cs.failed, cs.firstErr)
	}

	fmt.Fprintln(w)
	switch spikes := most(wave, 100*time.Millisecond); {
	case spikes > len(wave)/2:
		fmt.Fprintf(w, "Pages set together expired together: %d rebuilds in one 100 ms.\n", spikes)
	default:
		fmt.Fprintf(w, "The jitter spread the wave: about %d rebuilds a second, over %.1f s.\n",
			len(wave)*int(time.Second)/int(max(wave[len(wave)-1]-wave[0], time.Second)), (wave[len(wave)-1] - wave[0]).Seconds())
	}
	switch {
	case cs.most > events.Pool:
		fmt.Fprintf(w, "The cold start put %d queries on a pool of %d.\n", cs.most, events.Pool)
	case cs.repeated == 0:
		fmt.Fprintf(w, "The cold start: each page queried once, never more than %d at once.\n", cs.most)
	}
	return nil
}

// playWarmUp runs the warm-up in a fresh world and returns each page's
// expiry, from the warm-up's start, sorted, and the server's name.
func playWarmUp(h *harness.H, url string, newShop NewShop, n int) ([]time.Duration, string, error) {
	ctx := h.Context()
	wd, err := openWorld(ctx, url)
	if err != nil {
		return nil, "", &harness.FlagError{Err: err}
	}
	defer wd.Close()
	t := fleet.NewTap(nil)
	clk := clock.NewFake(nine)
	shop := newShop(events.New(events.WithCost(0), events.WithClock(clk)), wd.Client(t), clk)
	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- shop.WarmUp(ctx, events.IDs(n)) }()
	if err := drive(h, clk, t, time.Time{}, func() bool { return len(done) > 0 }); err != nil {
		return nil, "", fmt.Errorf("the warm-up: %w", err)
	}
	if err := <-done; err != nil {
		return nil, "", fmt.Errorf("the warm-up failed: %w", err)
	}
	r, err := wd.Read(ctx, nil)
	if err != nil {
		return nil, "", err
	}
	writes := t.Wrote()
	var wave []time.Duration
	for _, l := range lifetimes(r, writes, wd.Embedded(), start) {
		if l.forever {
			continue
		}
		at := l.mid()
		if w, ok := writes[l.key]; ok && !wd.Embedded() {
			at += w.Sent.Add(w.Answered.Sub(w.Sent) / 2).Sub(start)
		}
		wave = append(wave, at)
	}
	slices.Sort(wave)
	return wave, wd.Describe(ctx), nil
}

// coldFigures is what the cold start did.
type coldFigures struct {
	readers, queries, repeated, most int
	served, tryAgain, failed         int
	last                             time.Duration
	firstErr                         error
}

// playColdStart plays the cold start on a fresh, empty world.
func playColdStart(h *harness.H, url string, newShop NewShop, n int) (coldFigures, error) {
	ctx := h.Context()
	wd, err := openWorld(ctx, url)
	if err != nil {
		return coldFigures{}, err
	}
	defer wd.Close()
	t := fleet.NewTap(nil)
	clk := clock.NewFake(nine)
	db := events.New(events.WithClock(clk))
	shop := newShop(db, wd.Client(t), clk)
	type answer struct {
		err error
		at  time.Duration
	}
	var ids []int
	answers := make(chan answer, n+n/waveSize*waveTwice+waveTwice)
	for first := 1; first <= n; first += waveSize {
		wave := events.IDs(min(waveSize, n-first+1))
		for i := range wave {
			wave[i] += first - 1
		}
		wave = append(wave, wave[:min(waveTwice, len(wave))]...)
		ids = append(ids, wave...)
		arrive := nine.Add(time.Duration(first/waveSize) * waveEvery)
		if err := drive(h, clk, t, arrive, func() bool { return false }); err != nil {
			return coldFigures{}, fmt.Errorf("the cold start: %w", err)
		}
		for _, id := range wave {
			go func() {
				page, err := shop.Page(ctx, id)
				if err == nil && page != events.PageOf(id) {
					err = fmt.Errorf("event %d: got %q", id, page)
				}
				answers <- answer{err, clk.Now().Sub(nine)}
			}()
		}
	}
	if err := drive(h, clk, t, time.Time{}, func() bool { return len(answers) == len(ids) }); err != nil {
		return coldFigures{}, fmt.Errorf("the cold start: %w", err)
	}
	var f coldFigures
	for range ids {
		a := <-answers
		var later interface{ RetryAfter() time.Duration }
		switch {
		case a.err == nil:
			f.served++
			f.last = max(f.last, a.at)
		case errors.As(a.err, &later):
			f.tryAgain++
		default:
			f.failed++
			if f.firstErr == nil {
				f.firstErr = a.err
			}
		}
	}
	f.readers, f.queries, f.most = len(ids), db.Total(), db.Most()
	for _, id := range events.IDs(n) {
		if db.Queries(id) > 1 {
			f.repeated++
		}
	}
	return f, nil
}

// drive moves the story's clock to each next wake-up once the process is at
// rest, until done holds, or, when until is set, until the clock reaches it.
// Rest is two snapshots in a row in which every goroutine is parked
// (harness.Parked) and no command to Redis waits for its answer (a
// goroutine waiting for a real server looks parked to a snapshot).
func drive(h *harness.H, clk *clock.Fake, t *fleet.Tap, until time.Time, done func() bool) error {
	deadline := clk.Now().Add(storyPatience)
	for idle := 0; ; {
		if err := h.Context().Err(); err != nil {
			return err
		}
		if sent, _ := t.InFlight(); sent > 0 || !h.Parked() {
			idle = 0
			time.Sleep(100 * time.Microsecond)
			continue
		}
		if idle++; idle < 2 {
			continue
		}
		idle = 0
		if done() {
			return nil
		}
		next, ok := clk.Next()
		if !until.IsZero() && (!ok || !next.Before(until)) {
			clk.Set(until)
			return nil
		}
		if !ok || next.After(deadline) {
			// Look again a while before calling it stuck: the scheduler
			// may count a goroutine just woken as neither.
			time.Sleep(20 * time.Millisecond)
			if done() {
				return nil
			}
			if next, ok = clk.Next(); !ok || next.After(deadline) {
				return fmt.Errorf("readers are waiting and nothing on the shop's clock will wake them: %s "+
					"(wait with the clock New is given)", h.Blocked())
			}
		}
		clk.Set(next)
	}
}

// most returns the most expiries in any window of length d.
func most(sorted []time.Duration, d time.Duration) int {
	best, j := 0, 0
	for i := range sorted {
		for sorted[i]-sorted[j] >= d {
			j++
		}
		best = max(best, i-j+1)
	}
	return best
}

// chartBin is the width of one column of the chart.
const chartBin = 100 * time.Millisecond

// columns counts the expiries in each chartBin from chartFrom to chartTo.
func columns(wave []time.Duration) []int {
	cols := make([]int, int((chartTo-chartFrom)/chartBin))
	for _, at := range wave {
		if at >= chartFrom && at < chartTo {
			cols[int((at-chartFrom)/chartBin)]++
		}
	}
	return cols
}

// busiestColumn returns the chart's tallest column.
func busiestColumn(wave []time.Duration) int { return slices.Max(columns(wave)) }

// chart draws the expiries per 100 ms from chartFrom to chartTo as columns
// of '#', chartRows high, with a time axis in seconds.
func chart(w io.Writer, wave []time.Duration) {
	const bin = chartBin
	cols := columns(wave)
	top := slices.Max(cols)
	for r := chartRows; r >= 1; r-- {
		label := ""
		if r == chartRows {
			label = fmt.Sprint(top)
		}
		var b strings.Builder
		for _, n := range cols {
			if n > 0 && n*chartRows > (r-1)*top {
				b.WriteByte('#')
			} else {
				b.WriteByte(' ')
			}
		}
		fmt.Fprintf(w, "  %5s |%s\n", label, strings.TrimRight(b.String(), " "))
	}
	fmt.Fprintf(w, "  %5s +%s\n", "0", strings.Repeat("-", len(cols)))
	axis := []byte(strings.Repeat(" ", len(cols)+4))
	for s := chartFrom; s <= chartTo; s += time.Second {
		label := fmt.Sprintf("%d", int(s.Seconds()))
		if s == chartFrom {
			label += " s"
		}
		copy(axis[int((s-chartFrom)/bin):], label)
	}
	fmt.Fprintf(w, "         %s\n", strings.TrimRight(string(axis), " "))
}

func secs1(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) }
func secs2(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }
