package library

// The same-lock check can catch a lock table that looks and makes in two
// critical sections only in a round where two visitors reach the table in
// the same few hundred nanoseconds, each on a processor of its own. It
// tries many rounds, but how many of them line up depends on the machine
// and its load; on one processor none do.
const sameInstant = "two locks for one shelf appear only when two visitors reach the table at the same instant, which the schedule decides"

// A waiter on a timer of its own acts in the checks that hold the query
// for its story time, every run; in the others it acts only if the scene,
// on a loaded machine, happens to last longer than its timer.
const realTime = "a waiter acts on its own timer (100-120 ms of real time) only if the scene lasts that long, which the machine's load decides"

var _ = register(2,
	entry{dir: "shipped", fails: []string{"apart"}},
	entry{dir: "wrong/freshlock", fails: []string{"same-lock", "two-shelves", "once"}},
	entry{dir: "wrong/splitcreate", maybe: map[string]string{
		"same-lock":   sameInstant,
		"two-shelves": sameInstant,
	}},
	entry{dir: "wrong/rwupgrade", maybe: map[string]string{
		"same-lock":   sameInstant,
		"two-shelves": sameInstant,
	}},
	entry{dir: "wrong/unguardedlocks", fails: []string{"race"}, maybe: map[string]string{
		"same-lock":   "the unguarded map may make two locks for a shelf, or crash with concurrent map writes",
		"two-shelves": "the same",
		"apart":       "the same",
	}},
	entry{dir: "wrong/keyless", fails: []string{"two-shelves", "apart"}},
	entry{dir: "wrong/nosecondlook", fails: []string{"two-shelves", "once"}},
	entry{dir: "wrong/stripes", fails: []string{"apart"}},
	entry{dir: "wrong/lengthslots", fails: []string{"apart"}},
	entry{dir: "wrong/chanlockfallback", fails: []string{"once"}, maybe: map[string]string{
		"two-shelves": realTime,
		"same-lock":   realTime,
	}},
	entry{dir: "wrong/busyerror", fails: []string{"served"}, maybe: map[string]string{
		"two-shelves": realTime,
		"same-lock":   realTime,
	}},
	entry{dir: "right/refcount"},
	entry{dir: "right/perkey"},
	entry{dir: "right/singleflight"},
	entry{dir: "right/donechan"},
	entry{dir: "right/syncmap"},
)
