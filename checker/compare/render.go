package compare

import (
	"fmt"
	"io"
	"math"
	"strings"
	"time"
)

// Tolerance is how far a row's source reads may be from the seed's figure
// and still match it: 5%, and no read at all for a figure of 1 or 100.
const Tolerance = 0.05

// Render prints the table, the chart of source reads over time, and how
// each row stands against seed 002. rows gives the seed's figures, by
// technique and code; results without a row of their own are printed
// without a comparison.
func Render(w io.Writer, wl Workload, rows []Row, results []Result) {
	fmt.Fprintf(w, "%s\n(Virtual time: every read really calls the technique's code. The source reads are the same every run;\n"+
		"the waits of rows whose waiters poll at random moments move a little.)\n\n", wl.Describe())

	width := len("technique")
	for _, r := range results {
		width = max(width, len(label(r)))
	}
	fmt.Fprintf(w, "  %-*s  %20s  %17s  %17s  %s\n", width, "", "source reads", "reads that waited", "stale reads", "old list left")
	fmt.Fprintf(w, "  %-*s  %10s  %8s  %7s  %8s  %7s  %8s  %s\n", width, "technique",
		"per expiry", "at once", "count", "longest", "count", "up to", "after the write")
	for _, r := range results {
		if r.Err != "" {
			fmt.Fprintf(w, "  %-*s  see below\n", width, label(r))
			continue
		}
		if r.NoWrite != "" {
			fmt.Fprintf(w, "  %-*s  %10d  %8d  %7d  %8s  %7s  %8s  %s\n", width, label(r),
				r.Source, r.AtOnce, r.Waited, dur(r.Longest), "-", "-", "n/a: no write to play")
			continue
		}
		fmt.Fprintf(w, "  %-*s  %10d  %8d  %7d  %8s  %7d  %8s  %s\n", width, label(r),
			r.Source, r.AtOnce, r.Waited, dur(r.Longest), r.Stale, dur(r.StaleBy), left(r))
	}
	for _, r := range results {
		if r.Err != "" {
			fmt.Fprintf(w, "  %s\n", wrap(fmt.Sprintf("%s did not finish, after %d reads of the window: %s", label(r), r.Reads, r.Err), 76, "    "))
			continue
		}
		if r.Failed > 0 {
			fmt.Fprintf(w, "  %s: %d reads failed (%s)\n", label(r), r.Failed, r.Problem)
		}
		if r.NoWrite != "" {
			fmt.Fprintf(w, "  %s\n", wrap(fmt.Sprintf("%s: no stale columns, because %s.", label(r), r.NoWrite), 76, "    "))
		}
	}

	fmt.Fprintf(w, "\nSource reads over time, one column per %s from %s before the expiry (|) to %s after:\n",
		secs((wl.Before+wl.After)/time.Duration(wl.Buckets)), secs(wl.Before), secs(wl.After))
	at := int(int64(wl.Before) * int64(wl.Buckets) / int64(wl.Before+wl.After))
	for _, r := range results {
		if r.Chart == nil || r.Err != "" {
			continue
		}
		top := 0
		for _, n := range r.Chart {
			top = max(top, n)
		}
		fmt.Fprintf(w, "  %-*s  %s|%s  busiest column %d\n", width, label(r), spark(r.Chart[:at], top), spark(r.Chart[at:], top), top)
	}

	fmt.Fprintf(w, "\nAgainst the worked example's figures (a count matches within %d%% of its figure):\n", int(Tolerance*100))
	for _, r := range results {
		row, ok := find(rows, r)
		if !ok || r.Err != "" {
			continue
		}
		var s string
		switch seed := row.Seed; {
		case seed.Reads != nil:
			s = judge(row, wl, r)
		case seed.Table != nil:
			s = fmt.Sprintf("the example gives no count; its table says: stops the stampede %q, stops the stale set %q. "+
				"Played: %s (at most %d at once), and %s", seed.Table.Stampede, seed.Table.StaleSet,
				sourceReads(r.Source), r.AtOnce, afterWrite(r))
			if seed.Why != "" {
				s += "; " + seed.Why
			}
			s += "."
		case seed.None != "":
			s = "the example gives no figure: " + seed.None + "."
		default:
			continue
		}
		fmt.Fprintf(w, "  %s\n", wrap(label(r)+": "+s, 76, "    "))
	}
}

// sourceReads says how many source reads a row made.
func sourceReads(n int) string {
	if n == 1 {
		return "1 source read"
	}
	return fmt.Sprintf("%d source reads", n)
}

// afterWrite says, in words, what a row served after the write.
func afterWrite(r Result) string {
	switch {
	case r.NoWrite != "":
		return "no write played"
	case r.Stale == 0 && !r.Left:
		return "no reader after the write got the old list"
	case !r.Left:
		return fmt.Sprintf("%d readers after the write got the old list, the last %s after it, and no cache kept it", r.Stale, dur(r.StaleBy))
	}
	return fmt.Sprintf("%d readers after the write got the old list, and the cache kept it (%s)", r.Stale, left(r))
}

// label names a result's row: the technique, and the code when it is a
// student's.
func label(r Result) string {
	if strings.HasPrefix(r.Code, "cases/") {
		return r.Technique + " (" + r.Code + ")"
	}
	return r.Technique
}

func find(rows []Row, r Result) (Row, bool) {
	for _, row := range rows {
		if row.Technique == r.Technique {
			return row, true
		}
	}
	return Row{}, false
}

// Matches reports whether a measured count is within Tolerance of the
// seed's figure.
func Matches(measured, seed int) bool {
	return math.Abs(float64(measured-seed)) <= Tolerance*float64(seed)
}

// judge says how a result stands against the seed's figures.
func judge(row Row, wl Workload, r Result) string {
	want := row.Seed.Reads(wl)
	s := fmt.Sprintf("%s; the example says %d (%s)", sourceReads(r.Source), want, row.Seed.Says)
	if row.Seed.NoMiss {
		s = fmt.Sprintf("%s and %d reads waited; the example says %d and no miss (%s)", sourceReads(r.Source), r.Waited, want, row.Seed.Says)
	}
	noMiss := !row.Seed.NoMiss || r.Waited == 0
	switch {
	case Matches(r.Source, want) && noMiss:
		return s + ": matches."
	case row.Seed.Why != "" && row.Seed.NoMiss && noMiss:
		return s + ": no read waited, as the example says; the count differs, because " + row.Seed.Why + "."
	case row.Seed.Why != "":
		return s + ": differs, because " + row.Seed.Why + "."
	}
	return s + ": DIFFERS, and compare knows no reason why."
}

// left says whether, and for how long, a cache kept the old list.
func left(r Result) string {
	switch {
	case !r.Left:
		return "no"
	case r.LeftPast:
		return fmt.Sprintf("yes, still at +%s", secs(r.Tail.Round(time.Second)))
	}
	return fmt.Sprintf("yes, for %s", secs(r.LeftFor.Round(100*time.Millisecond)))
}

// dur formats a virtual time to the millisecond, or "-" for none.
func dur(d time.Duration) string {
	if d == 0 {
		return "-"
	}
	return secs(d.Round(time.Millisecond))
}

// spark draws counts as one line, each column a character from '.' (no
// source read) through ':' (a few) to '#' (the row's busiest column).
func spark(counts []int, top int) string {
	const levels = ":-=+*#"
	var b strings.Builder
	for _, n := range counts {
		switch {
		case n == 0:
			b.WriteByte('.')
		default:
			i := (n*len(levels) - 1) / top
			b.WriteByte(levels[min(i, len(levels)-1)])
		}
	}
	return b.String()
}

// wrap breaks text into lines of at most width characters, the lines after
// the first indented.
func wrap(text string, width int, indent string) string {
	var b strings.Builder
	line := 0
	for i, word := range strings.Fields(text) {
		switch {
		case i == 0:
		case line+1+len(word) > width:
			b.WriteString("\n" + indent)
			line = len(indent)
		default:
			b.WriteByte(' ')
			line++
		}
		b.WriteString(word)
		line += len(word)
	}
	return b.String()
}
