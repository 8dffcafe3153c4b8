package library

// The same-lock check can catch a lock table that looks and makes in two
// critical sections only in a round where two visitors reach the table in
// the same few hundred nanoseconds, each on a processor of its own. It
// tries many rounds, but how many of them line up depends on the machine
// and its load; on one processor none do.
const sameInstant = "two locks for one shelf appear only when two visitors reach the table at the same instant, which the schedule decides"

var _ = register(2,
	entry{dir: "shipped", fails: []string{"apart", "explore"}},
	entry{dir: "wrong/freshlock", fails: []string{"same-lock", "two-shelves", "explore"}},
	entry{dir: "wrong/splitcreate", maybe: map[string]string{
		"explore":     sameInstant,
		"same-lock":   sameInstant,
		"two-shelves": sameInstant,
	}},
	entry{dir: "wrong/rwupgrade", maybe: map[string]string{
		"explore":     sameInstant,
		"same-lock":   sameInstant,
		"two-shelves": sameInstant,
	}},
	entry{dir: "wrong/unguardedlocks", fails: []string{"race"}, maybe: map[string]string{
		"same-lock":   "the unguarded map may make two locks for a shelf, or crash with concurrent map writes",
		"two-shelves": "the same",
		"apart":       "the same",
		"explore":     "the same",
	}},
	entry{dir: "wrong/keyless", fails: []string{"two-shelves", "apart", "explore"}},
	entry{dir: "wrong/nosecondlook", fails: []string{"two-shelves", "explore"}},
	entry{dir: "wrong/explore-nocache", fails: []string{"explore"}},
	entry{dir: "wrong/explore-stalecopy", fails: []string{"explore"}},
	entry{dir: "right/perkey"},
	entry{dir: "right/singleflight"},
	entry{dir: "right/donechan"},
	entry{dir: "right/syncmap"},
)
