package library

var _ = register(1,
	entry{dir: "shipped", fails: []string{"once", "two-shelves", "explore"}},
	entry{dir: "wrong/globallock", fails: []string{"apart", "explore"}},
	entry{dir: "wrong/nosecondlook", fails: []string{"once", "two-shelves", "explore"}},
	entry{dir: "wrong/unguardedread", fails: []string{"race"}, maybe: map[string]string{
		"explore": "an unguarded map read beside a fill may crash the program (concurrent map read and map write) in some scene, or in none",
	}},
	entry{dir: "wrong/unlockedfastpath", fails: []string{"race"}, maybe: map[string]string{
		"explore": "an unguarded map read beside a fill may crash the program (concurrent map read and map write) in some scene, or in none",
	}},
	entry{dir: "wrong/unguardedlocks", fails: []string{"race"}, maybe: map[string]string{
		"explore":     "the lock table may crash with concurrent map writes, or make two locks for a shelf",
		"once":        "two visitors may make two locks for the shelf, or may not",
		"two-shelves": "the same",
		"served":      "the lock table may crash with concurrent map writes",
		"apart":       "the same",
	}},
	entry{dir: "wrong/keyless", fails: []string{"two-shelves", "apart", "explore"}},
	entry{dir: "wrong/emptywaiters", fails: []string{"served", "two-shelves", "explore"}},
	entry{dir: "wrong/explore-nocache", fails: []string{"explore"}},
	entry{dir: "wrong/explore-stalecopy", fails: []string{"explore"}},
	entry{dir: "right/perkey"},
	entry{dir: "right/singleflight"},
	entry{dir: "right/donechan"},
	entry{dir: "right/syncmap"},
)
