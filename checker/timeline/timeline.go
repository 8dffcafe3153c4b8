// Package timeline records what each visitor of a story did, when, and
// draws it as text: one lane per visitor, so that fifty queries side by
// side, or one query and forty-nine waiters, show at a glance.
package timeline

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

type visitorKey struct{}

// Recorder collects the visitors' arrivals, queries and answers. It is
// safe for concurrent use.
type Recorder struct {
	start time.Time
	cost  time.Duration // how long one query takes

	mu    sync.Mutex
	lanes map[int]*lane
	other []time.Duration // query starts no visitor could be named for
}

type lane struct {
	arrived, answered time.Duration
	queries           []time.Duration // starts
	done              bool
}

// New starts a recording at start; cost is how long one query takes.
func New(start time.Time, cost time.Duration) *Recorder {
	return &Recorder{start: start, cost: cost, lanes: map[int]*lane{}}
}

// Arrive records visitor i's arrival at now and returns a context that
// names the visitor to the database hook.
func (r *Recorder) Arrive(ctx context.Context, i int, now time.Time) context.Context {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lanes[i] = &lane{arrived: now.Sub(r.start)}
	return context.WithValue(ctx, visitorKey{}, i)
}

// Answer records visitor i's answer at now.
func (r *Recorder) Answer(i int, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if l := r.lanes[i]; l != nil {
		l.answered, l.done = now.Sub(r.start), true
	}
}

// Query records a query started at now on behalf of whichever visitor ctx
// names. It fits catalog.WithHook once the clock is bound:
//
//	catalog.WithHook(func(ctx context.Context, _ string) error { rec.Query(ctx, clk.Now()); return nil })
func (r *Recorder) Query(ctx context.Context, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	at := now.Sub(r.start)
	if i, ok := ctx.Value(visitorKey{}).(int); ok && r.lanes[i] != nil {
		r.lanes[i].queries = append(r.lanes[i].queries, at)
		return
	}
	r.other = append(r.other, at)
}

// Draw writes the timeline, width columns wide. With more than maxLanes
// visitors it draws the first maxLanes-2 and the last two, and counts the
// rest.
func (r *Recorder) Draw(w io.Writer, width, maxLanes int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := len(r.lanes)
	end := r.cost
	for _, l := range r.lanes {
		end = max(end, l.answered)
		for _, q := range l.queries {
			end = max(end, q+r.cost)
		}
	}
	step := end / time.Duration(width)
	if step <= 0 {
		step = time.Millisecond
	}
	col := func(d time.Duration) int { return min(int(d/step), width-1) }

	// The database lane: how many queries run at the middle of each
	// column. Counting at one instant, not over the column, keeps two
	// queries that follow each other from looking like two at once.
	busy := make([]int, width)
	mark := func(start time.Duration) {
		for c := range busy {
			mid := time.Duration(c)*step + step/2
			if start <= mid && mid < start+r.cost {
				busy[c]++
			}
		}
	}
	for _, l := range r.lanes {
		for _, q := range l.queries {
			mark(q)
		}
	}
	for _, q := range r.other {
		mark(q)
	}
	fmt.Fprintf(w, "  %-11s %s\n", "", axis(width, end))
	var db strings.Builder
	for _, b := range busy {
		switch {
		case b == 0:
			db.WriteByte(' ')
		case b > 9:
			db.WriteByte('+')
		default:
			db.WriteByte(byte('0' + b))
		}
	}
	fmt.Fprintf(w, "  %-11s %s\n", "database", db.String())

	show := r.shown(n, maxLanes)
	queried, waited := 0, 0
	gap := false
	for i := range n {
		l := r.lanes[i]
		if l == nil {
			continue
		}
		if len(l.queries) > 0 {
			queried++
		} else {
			waited++
		}
		if !show[i] {
			if !gap {
				fmt.Fprintf(w, "  %-11s ...\n", "")
			}
			gap = true
			continue
		}
		gap = false
		fmt.Fprintf(w, "  %-11s %s\n", fmt.Sprintf("visitor %d", i+1), l.draw(width, col, r.cost))
	}
	fmt.Fprintf(w, "\n  = querying the database   . waiting   | answered   (digits: queries running at that moment; + is ten or more)\n")
	fmt.Fprintf(w, "  %d visitors: %d ran a query of their own, %d only waited\n", n, queried, waited)
}

// shown picks the lanes of n visitors to draw, at most maxLanes: every
// visitor who ran a query first (the lanes the picture is about), then the
// last two and the first ones, so that a long crowd keeps its ends.
func (r *Recorder) shown(n, maxLanes int) []bool {
	show := make([]bool, n)
	if n <= maxLanes {
		for i := range show {
			show[i] = true
		}
		return show
	}
	left := maxLanes
	pick := func(i int) {
		if left > 0 && !show[i] && r.lanes[i] != nil {
			show[i] = true
			left--
		}
	}
	for i := range n {
		if r.lanes[i] != nil && len(r.lanes[i].queries) > 0 {
			pick(i)
		}
	}
	for i := n - 1; i >= n-2; i-- {
		pick(i)
	}
	for i := range n {
		pick(i)
	}
	return show
}

func (l *lane) draw(width int, col func(time.Duration) int, cost time.Duration) string {
	row := []byte(strings.Repeat(" ", width))
	last := col(l.answered)
	if !l.done {
		last = width - 1
	}
	for c := col(l.arrived); c <= last; c++ {
		row[c] = '.'
	}
	for _, q := range l.queries {
		for c := col(q); c <= min(col(q+cost-1), last); c++ {
			row[c] = '='
		}
	}
	if l.done {
		row[last] = '|'
	}
	return string(row)
}

// axis labels the start, middle and end of the time line.
func axis(width int, end time.Duration) string {
	row := []byte(strings.Repeat(" ", width))
	put := func(at int, s string) {
		at = max(0, min(at, width-len(s)))
		copy(row[at:], s)
	}
	put(0, "0s")
	put(width/2-2, seconds(end/2))
	put(width, seconds(end))
	return string(row)
}

func seconds(d time.Duration) string { return fmt.Sprintf("%.2gs", d.Seconds()) }
