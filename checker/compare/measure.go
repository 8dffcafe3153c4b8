package compare

import (
	"slices"
	"time"
)

// measure turns what the play recorded into the row's figures.
func (p *play) measure() Result {
	p.mu.Lock()
	defer p.mu.Unlock()
	res := Result{Technique: p.row.Technique, Code: p.row.Code, Case: p.row.Case, Tail: p.w.Tail - p.w.WriteAt, NoWrite: p.row.NoWrite}

	// Source reads: how many, how many at once (each runs for the
	// rebuild's time, or until the code gives it up), and when, in the
	// chart's columns.
	res.Source = len(p.queries)
	type edge struct {
		at    time.Time
		delta int // +1 a read starts, -1 one ends
	}
	var edges []edge
	starts := make([]time.Time, 0, len(p.queries))
	for _, q := range p.queries {
		starts = append(starts, q.start)
		edges = append(edges, edge{q.start, 1}, edge{q.end, -1})
	}
	// At one instant, an end comes before a start: a read that ends as
	// another starts was not running with it.
	slices.SortFunc(edges, func(a, b edge) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		return a.delta - b.delta
	})
	running := 0
	for _, e := range edges {
		running += e.delta
		res.AtOnce = max(res.AtOnce, running)
	}
	windowStart := expiry.Add(-p.w.Before)
	span := p.w.Before + p.w.After
	res.Chart = make([]int, p.w.Buckets)
	for _, s := range starts {
		col := int(int64(s.Sub(windowStart)) * int64(p.w.Buckets) / int64(span))
		res.Chart[min(max(col, 0), p.w.Buckets-1)]++
	}

	// The reads: who waited, who failed, who got the old list after the
	// write, and until when a cache kept it.
	windowEnd := expiry.Add(p.w.After)
	var lastStale, lastTailRound time.Time
	for _, r := range p.reads {
		if r.tail && r.at.Before(windowStart) {
			continue // the warm-up
		}
		if !r.tail {
			res.Reads++
			if r.returned && r.left.After(r.at) {
				res.Waited++
				res.Longest = max(res.Longest, r.left.Sub(r.at))
				if r.at.Before(p.write) {
					res.WaitedBefore++
				}
			}
		}
		if !r.returned || r.got == none || r.got == wrong {
			res.Failed++
			if res.Problem == "" {
				res.Problem = r.problem
				if !r.returned {
					res.Problem = "a read never returned"
				}
			}
			continue
		}
		if r.got != old || r.at.Before(p.write) || p.row.NoWrite != "" {
			continue
		}
		if !r.tail {
			res.Stale++
			res.StaleBy = max(res.StaleBy, r.left.Sub(p.write))
		}
		lastStale = r.left
		if !r.at.Before(windowEnd) {
			res.Left = true
		}
	}
	if res.Left {
		res.LeftFor = lastStale.Sub(p.write)
		// Still served in the tail's last second: the tail did not see it go.
		lastTailRound = expiry.Add(p.w.Tail - time.Second)
		res.LeftPast = !lastStale.Before(lastTailRound)
	}
	return res
}
