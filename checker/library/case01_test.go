package library

var _ = register(1,
	entry{dir: "shipped", fails: []string{"once", "two-shelves"}},
	entry{dir: "wrong/globallock", fails: []string{"apart"}},
	entry{dir: "wrong/nosecondlook", fails: []string{"once", "two-shelves"}},
	entry{dir: "wrong/unguardedread", fails: []string{"race"}},
	entry{dir: "wrong/unlockedfastpath", fails: []string{"race"}, maybe: map[string]string{
		"apart": "an unguarded read beside a fill may crash with the runtime's concurrent map error, or not",
	}},
	entry{dir: "wrong/unguardedlocks", fails: []string{"race"}, maybe: map[string]string{
		"once":        "two visitors may make two locks for the shelf, or may not",
		"two-shelves": "the same",
		"served":      "the lock table may crash with concurrent map writes",
		"apart":       "the same",
	}},
	entry{dir: "wrong/keyless", fails: []string{"two-shelves", "apart"}},
	entry{dir: "wrong/emptywaiters", fails: []string{"served", "two-shelves"}},
	entry{dir: "wrong/waittimeout", fails: []string{"once"}, maybe: map[string]string{
		"two-shelves": realTime,
	}},
	entry{dir: "wrong/timeouterror", fails: []string{"served"}, maybe: map[string]string{
		"two-shelves": realTime,
	}},
	entry{dir: "wrong/nevercached", fails: []string{"served", "once", "two-shelves"}},
	entry{dir: "wrong/namedresult", fails: []string{"served", "once", "two-shelves"}},
	entry{dir: "wrong/ctxkey", fails: []string{"once", "two-shelves"}},
	entry{dir: "wrong/hashflights", fails: []string{"two-shelves", "apart"}},
	entry{dir: "wrong/errfield", fails: []string{"race"}},
	entry{dir: "wrong/spinwait", fails: []string{"served", "once", "two-shelves", "apart", "race"}},
	entry{dir: "right/owner"},
	entry{dir: "right/cow"},
	entry{dir: "right/perkey"},
	entry{dir: "right/singleflight"},
	entry{dir: "right/donechan"},
	entry{dir: "right/syncmap"},
)
