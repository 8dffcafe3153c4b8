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

// randomPoints is why the random scenes' verdict on an answer whose bug
// sits between two adjacent statements is maybe: their schedules, drawn
// from the seed, switch there in some runs; the fixed scenes of the
// switches check do in every run.
const randomPoints = "the random scenes' schedules switch in this gap in some runs; the switches check's fixed scenes in every run"

var _ = register(2,
	entry{dir: "shipped", fails: []string{"apart", "explore", "switches"}},
	entry{dir: "wrong/freshlock", fails: []string{"same-lock", "two-shelves", "once", "explore", "switches"}},
	entry{dir: "wrong/splitcreate", fails: []string{"switches"}, maybe: map[string]string{
		"explore":     sameInstant,
		"once":        sameInstant,
		"same-lock":   sameInstant,
		"two-shelves": sameInstant,
	}},
	entry{dir: "wrong/rwupgrade", fails: []string{"switches"}, maybe: map[string]string{
		"explore":     sameInstant,
		"once":        sameInstant,
		"same-lock":   sameInstant,
		"two-shelves": sameInstant,
	}},
	entry{dir: "wrong/unguardedlocks", fails: []string{"race", "switches"}, maybe: map[string]string{
		"explore":     "the same",
		"same-lock":   "the unguarded map may make two locks for a shelf, or crash with concurrent map writes",
		"two-shelves": "the same",
		"apart":       "the same",
		"once":        "the same, with 50 visitors on one shelf",
		"served":      "its 50 visitors write the unguarded map at once, which may crash with concurrent map writes, or not",
	}},
	entry{dir: "wrong/keyless", fails: []string{"two-shelves", "apart", "explore", "switches"}},
	entry{dir: "wrong/nosecondlook", fails: []string{"two-shelves", "once", "explore", "switches"}},
	entry{dir: "wrong/stripes", fails: []string{"apart"}, maybe: map[string]string{
		"explore": "the explorer's small scenes (one to three shelves, queries of a few ms) may or may not meet this bug; the checks named beside it are the ones that catch it",
	}},
	entry{dir: "wrong/lengthslots", fails: []string{"apart", "explore", "switches"}},
	entry{dir: "wrong/chanlockfallback", fails: []string{"once"}, maybe: map[string]string{
		"explore":     "a waiter that acts on its own real-time timer meets the explorer's short scenes only by chance",
		"two-shelves": realTime,
		"same-lock":   realTime,
	}},
	entry{dir: "wrong/busyerror", fails: []string{"served"}, maybe: map[string]string{
		"explore":     "a waiter that acts on its own real-time timer meets the explorer's short scenes only by chance",
		"two-shelves": realTime,
		"same-lock":   realTime,
	}},
	entry{dir: "wrong/explore-nocache", fails: []string{"once", "served", "two-shelves", "explore", "switches"}},
	entry{dir: "wrong/explore-stalecopy", fails: []string{"two-shelves", "explore", "switches"}},
	entry{dir: "right/refcount"},
	entry{dir: "right/perkey"},
	entry{dir: "right/singleflight"},
	entry{dir: "right/donechan"},
	entry{dir: "right/syncmap"},
	// Written blind for issue 26, each with its bug between two adjacent
	// statements: the explorer's schedule points open the gap.
	entry{dir: "wrong/close-then-fill", fails: []string{"switches"}, maybe: map[string]string{
		"explore": randomPoints,
	}},
	entry{dir: "wrong/lock-order", fails: []string{"switches"}, maybe: map[string]string{
		"explore": randomPoints,
	}},
	entry{dir: "wrong/rw-locktable", fails: []string{"same-lock", "switches"}, maybe: map[string]string{
		"explore":     randomPoints,
		"two-shelves": "two visitors may make two locks for a shelf in the check's burst, or may not",
	}},
	// A second set written blind for issue 26, after the switches check.
	entry{dir: "wrong/lock-order-land", fails: []string{"switches"}, maybe: map[string]string{
		"explore": randomPoints,
	}},
	entry{dir: "wrong/waiters-split", fails: []string{"switches"}, maybe: map[string]string{
		"explore": randomPoints,
	}},
	entry{dir: "right/cond"},
)
