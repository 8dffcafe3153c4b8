package compare

import (
	"fmt"
	"io"
	"time"
)

// A Variant plays one row of the table again on a workload of its own, to
// show what the table's one workload cannot: a cost the seed names, or a
// claim of the seed that the table's write hides.
type Variant struct {
	Case     int // the row's case: the row of Reference with that Case
	Workload func(Workload) Workload
	Render   func(io.Writer, Workload, Result)
}

// Variants lists the variants `compare` plays after the table.
func Variants() []Variant {
	return []Variant{
		{Case: 6, Workload: StaleHolder, Render: RenderStaleHolder},
		{Case: 9, Workload: WriteLater, Render: RenderWriteLater},
	}
}

// WriteLater is the workload on which compare plays serve stale with its
// write out of the expiry's rebuild: the table's write comes half way
// through that rebuild, and its delete leaves serve stale nothing to
// serve, so readers wait; here it comes a second after the expiry, when
// the rebuild has long landed. The window starts half a second before
// the expiry, and the tail looks 10 s past the write.
func WriteLater(w Workload) Workload {
	w.Before = min(w.Before, 500*time.Millisecond)
	w.WriteAt = w.Rebuild + 800*time.Millisecond
	w.After = max(w.After, w.WriteAt+5*w.Rebuild)
	w.Tail = 10 * time.Second
	return w
}

// RenderWriteLater prints what the serve-stale row did on WriteLater's
// workload w.
func RenderWriteLater(out io.Writer, w Workload, r Result) {
	fmt.Fprintf(out, "\nServe stale with the write %s after the expiry, out of the expiry's rebuild:\n", secs(w.WriteAt))
	if r.Err != "" {
		fmt.Fprintf(out, "  %s\n", wrap("the row did not finish: "+r.Err, 76, "    "))
		return
	}
	s := fmt.Sprintf("%s; %d reads waited before the write (the example's table: readers never wait), "+
		"and %d after it, the longest %s; %s.", sourceReads(r.Source), r.WaitedBefore, r.Waited-r.WaitedBefore, dur(r.Longest), afterWrite(r))
	if r.WaitedBefore == 0 && r.Waited > 0 {
		s += " At the expiry nobody waited: the stale list was served while one reader rebuilt it. The waits are " +
			"the write's: its delete leaves nothing to serve, as case 9 means it to."
	}
	fmt.Fprintf(out, "  %s\n", wrap(s, 76, "  "))
}
