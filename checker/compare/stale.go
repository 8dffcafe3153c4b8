package compare

import (
	"fmt"
	"io"
	"time"
)

// case6LockTTL is how long case 6's lock lives (solutions/case06's
// lockTTL, a constant, not an argument).
const case6LockTTL = 2 * time.Second

// StaleHolder is the workload on which compare plays the cost seed 002's
// table names for the Redis lock, its stale holder: w's fleet at up to
// 1,000 reads a second (each read that waits is a goroutine, and polls
// for a second), with a rebuild half a second longer than case 6's lock
// lives, so that the lock expires under a holder that is still at work.
// The write comes as before, early in the first rebuild, and the tail
// looks 10 s past it.
func StaleHolder(w Workload) Workload {
	w.Rate = max(w.Servers, min(w.Rate, 1_000))
	w.Tail = 10 * time.Second
	w.Rebuild = case6LockTTL + 500*time.Millisecond
	w.Before = 2 * time.Second
	w.After = 2*w.Rebuild + time.Second
	w.WriteAt = 100 * time.Millisecond
	return w
}

// RenderStaleHolder prints what the Redis lock's row did on StaleHolder's
// workload w.
func RenderStaleHolder(out io.Writer, w Workload, r Result) {
	fmt.Fprintf(out, "\nThe Redis lock's stale holder, the cost the example's table names for it:\n")
	if r.Err != "" {
		fmt.Fprintf(out, "  %s\n", wrap("the row did not finish: "+r.Err, 76, "    "))
		return
	}
	none := r.Failed >= r.Reads // the tail's reads count too
	served := fmt.Sprintf("%d of the window's %d reads told to try again; %s", r.Failed, r.Reads, afterWrite(r))
	if none {
		served = fmt.Sprintf("every read told to try again, the window's %d and the tail's, up to %s after the write",
			r.Reads, secs(r.Tail))
	}
	s := fmt.Sprintf("%d reads a second, a rebuild of %s, longer than case 6's lock lives (%s): "+
		"%s, at most %d at once; %s.", w.Rate, secs(w.Rebuild), secs(case6LockTTL), sourceReads(r.Source), r.AtOnce, served)
	switch {
	case r.AtOnce >= 2:
		s += " Each lock expired under its holder, still at work, and another holder started the same rebuild beside it"
		if r.Stale > 0 {
			s += "; a holder's fill, of the list it read before the write, landed after its lock was gone"
		}
		s += "."
	case r.Source >= 2:
		s += " Each lock expired before its holder's rebuild was done; the holder gave its query up, and the next " +
			"holder started the same rebuild over."
	case r.Source == 1:
		s += " The holder renewed its lock while it read, so no second holder came: a slow database makes no stale " +
			"holder. A paused one still does (a GC pause or a frozen VM longer than the lock: its renewals stop, " +
			"the lock passes, and its fill lands beside the next holder's when it wakes); fencing tokens close that."
	}
	if r.Stale > 0 && r.AtOnce < 2 {
		s += " And the lock does nothing for the write: the holder's read began before it, and its fill landed " +
			"after the write's delete, so the old list stayed: the stale set, which the example's table says the " +
			"lock does not stop (case 10's leases do)."
	}
	if none {
		s += " No fill ever landed, not even the warm-up's: the flight gave its query up when its lock " +
			"expired, and so a database slower than the lock never filled the cache."
	}
	fmt.Fprintf(out, "  %s\n", wrap(s, 76, "  "))
}
