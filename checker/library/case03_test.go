package library

var _ = register(3,
	entry{dir: "shipped", fails: []string{"once", "one-round", "two-shelves", "explore", "switches"}},
	entry{dir: "wrong/stampede", fails: []string{"once", "two-shelves", "explore", "switches"}},
	entry{dir: "wrong/lookbeforelock", fails: []string{"once", "one-round", "two-shelves", "explore", "switches"}},
	entry{dir: "wrong/unlockfirst", fails: []string{"switches"}, maybe: map[string]string{
		"explore":   "a visitor queries again only if it arrives in that gap, which the explorer stages now and then",
		"once":      "a waiter queries again only if it takes the lock in the gap before the cache is filled",
		"one-round": "the same",
		// 16 shelves, each with waiters on the lock: 16 chances at the gap a run.
		"two-shelves": "the same",
	}},
	entry{dir: "wrong/emptywaiters", fails: []string{"served", "two-shelves", "explore", "switches"}},
	entry{dir: "wrong/unguardedsecondlook", fails: []string{"race"}, maybe: map[string]string{
		"explore": "an unguarded map read beside a fill may crash the program (concurrent map read and map write) in some scene, or in none",
	}},
	entry{dir: "wrong/trylockpoll", fails: []string{"once"}, maybe: map[string]string{
		"explore":     "a waiter that acts on its own real-time timer meets the explorer's short scenes only by chance",
		"two-shelves": realTime,
		"one-round":   realTime,
	}},
	entry{dir: "wrong/lockpool", fails: []string{"apart"}, maybe: map[string]string{
		"explore": "the explorer's small scenes (one to three shelves, queries of a few ms) may or may not meet this bug; the checks named beside it are the ones that catch it",
	}},
	entry{dir: "wrong/explore-freeonleave", fails: []string{"once", "one-round", "served", "two-shelves", "explore", "switches"}},
	entry{dir: "wrong/explore-keyless", fails: []string{"apart", "two-shelves", "explore", "switches"}},
	entry{dir: "wrong/explore-stalecopy", fails: []string{"two-shelves", "explore", "switches"}},
	entry{dir: "right/cond"},
	entry{dir: "right/perkey"},
	entry{dir: "right/singleflight"},
	entry{dir: "right/donechan"},
	entry{dir: "right/syncmap"},
	// Written blind for issue 26, each with its bug between two adjacent
	// statements: the explorer's schedule points open the gap.
	entry{dir: "wrong/claim-flag", fails: []string{"race", "switches"}, maybe: map[string]string{
		"explore": randomPoints,
	}},
	entry{dir: "wrong/cond-lost-wakeup", fails: []string{"switches"}, maybe: map[string]string{
		"explore": randomPoints,
	}},
	entry{dir: "wrong/unlock-then-fill", fails: []string{"switches"}, maybe: map[string]string{
		"explore": randomPoints,
	}},
	// A second set written blind for issue 26, after the switches check.
	entry{dir: "wrong/delete-then-publish", fails: []string{"switches"}, maybe: map[string]string{
		"explore": randomPoints,
	}},
	entry{dir: "wrong/close-before-store", fails: []string{"switches"}, maybe: map[string]string{
		"explore": randomPoints,
	}},
)
