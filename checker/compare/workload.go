// Package compare plays one workload, seed 002's worked example, through
// each technique's real code and measures what happens around one expiry:
// source reads, how many at once, who waited, and what a write in the
// middle of the rebuild leaves behind. It is what `shop compare` prints.
//
// Every row runs on virtual time (see play): a fake clock that moves only
// when every goroutine of the process is at rest, so a run gives the same
// counts on a loaded machine as on a quiet one. The Redis rows talk to an
// embedded miniredis over in-memory connections, whose clock moves with the
// shops' clock.
package compare

import (
	"fmt"
	"time"
)

// Workload is the traffic a row plays: reads spread evenly over a fleet of
// servers, around the moment the key expires.
type Workload struct {
	Servers int           // app servers, each with its own shop instance
	Rate    int           // reads per second, the whole fleet together
	Rebuild time.Duration // how long the source query takes
	TTL     time.Duration // how long a value lives in the cache
	Before  time.Duration // played before the expiry
	After   time.Duration // played after the expiry
	// WriteAt is when, after the expiry, the catalogue changes: in the
	// middle of the rebuild by default, to stage the stale-set race.
	WriteAt time.Duration
	// Tail is how long after the expiry compare keeps looking for the old
	// value, with TailReads reads per second per server, which are counted
	// for that and nothing else.
	Tail      time.Duration
	TailReads int
	Buckets   int // columns of the chart of source reads over time
}

// Default is seed 002's worked example: 10,000 reads a second over 100
// servers and a 200 ms rebuild, the two seconds before one expiry and the
// second after it, and a write 100 ms into the rebuild. The 30 s time to
// live is case 6's and case 7's.
func Default() Workload {
	return Workload{
		Servers:   100,
		Rate:      10_000,
		Rebuild:   200 * time.Millisecond,
		TTL:       30 * time.Second,
		Before:    2 * time.Second,
		After:     time.Second,
		WriteAt:   100 * time.Millisecond,
		Tail:      40 * time.Second,
		TailReads: 1,
		Buckets:   30,
	}
}

// Fit sizes the window to the rebuild: XFetch starts its refreshes a few
// rebuilds before the expiry (about ln(reads per server per rebuild)
// rebuilds early), so the window starts ten rebuilds before it, and at
// least 2 s; it ends five rebuilds after, and at least 1 s; and the write
// comes half way through the rebuild. Default is already fitted.
func (w Workload) Fit() Workload {
	w.Before = max(2*time.Second, 10*w.Rebuild)
	w.After = max(time.Second, 5*w.Rebuild)
	w.WriteAt = w.Rebuild / 2
	return w
}

// Limits on what a workload may ask, so that a run stays within seconds
// and within the process's goroutines: every read that waits is one.
const (
	MaxServers = 1_000
	MaxRate    = 100_000
	MaxRebuild = 3 * time.Second
)

// Check says what is wrong with a workload, or returns nil.
func (w Workload) Check() error {
	switch {
	case w.Servers < 1 || w.Servers > MaxServers:
		return fmt.Errorf("servers must be from 1 to %d, not %d", MaxServers, w.Servers)
	case w.Rate < w.Servers || w.Rate > MaxRate:
		return fmt.Errorf("rate must be from the number of servers (%d) to %d reads a second, not %d", w.Servers, MaxRate, w.Rate)
	case w.Rebuild <= 0 || w.Rebuild > MaxRebuild:
		return fmt.Errorf("rebuild must be more than 0 and at most %v, not %v", MaxRebuild, w.Rebuild)
	case int64(w.Rate)*int64(w.Before+w.After)/int64(time.Second) > 400_000:
		return fmt.Errorf("the window holds %d reads; compare plays at most 400000 a row",
			int64(w.Rate)*int64(w.Before+w.After)/int64(time.Second))
	case w.Rate*int(w.Rebuild/time.Millisecond)/1000 > 20_000:
		return fmt.Errorf("rate x rebuild is %d reads in one rebuild; compare plays at most 20000 (each is a goroutine)",
			w.Rate*int(w.Rebuild/time.Millisecond)/1000)
	case w.TTL <= w.Rebuild || w.Before <= 0 || w.After <= w.Rebuild || w.WriteAt < 0 || w.WriteAt >= w.After:
		return fmt.Errorf("the window must hold the rebuild and the write: ttl %v, before %v, after %v, write at %v",
			w.TTL, w.Before, w.After, w.WriteAt)
	case w.Buckets < 1:
		return fmt.Errorf("the chart needs at least one column")
	}
	return nil
}

// every is the time between two reads of the fleet.
func (w Workload) every() time.Duration { return time.Second / time.Duration(w.Rate) }

// Describe says the workload in a line or two.
func (w Workload) Describe() string {
	return fmt.Sprintf("%d reads a second over %d servers (%s each), a %s rebuild, a %s time to live.\n"+
		"Played from %s before the key expires to %s after; the catalogue changes %s after the expiry.",
		w.Rate, w.Servers, perServer(w), secs(w.Rebuild), secs(w.TTL), secs(w.Before), secs(w.After), secs(w.WriteAt))
}

func perServer(w Workload) string {
	per := float64(w.Rate) / float64(w.Servers)
	if per == float64(int(per)) {
		return fmt.Sprintf("%d", int(per))
	}
	return fmt.Sprintf("%.1f", per)
}

// secs formats a duration in seconds, as the lab's stories do: "0.2 s".
func secs(d time.Duration) string {
	return fmt.Sprintf("%s s", trim(fmt.Sprintf("%.3f", d.Seconds())))
}

func trim(s string) string {
	for len(s) > 1 && s[len(s)-1] == '0' {
		s = s[:len(s)-1]
	}
	if s[len(s)-1] == '.' {
		s = s[:len(s)-1]
	}
	return s
}
