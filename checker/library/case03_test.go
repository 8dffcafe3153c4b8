package library

var _ = register(3,
	entry{dir: "shipped", fails: []string{"once", "one-round", "two-shelves", "explore", "switches"}},
	entry{dir: "wrong/stampede", fails: []string{"once", "two-shelves", "explore", "switches"}},
	entry{dir: "wrong/lookbeforelock", fails: []string{"once", "one-round", "two-shelves", "explore", "switches"}},
	// Its gap (the lock let go before the cache is filled) has no wait in
	// it: the burst checks, one goroutine at a time, never open it.
	entry{dir: "wrong/unlockfirst", fails: []string{"switches", "explore"}},
	entry{dir: "wrong/emptywaiters", fails: []string{"served", "two-shelves", "explore", "switches"}},
	entry{dir: "wrong/unguardedsecondlook", fails: []string{"race"}},
	entry{dir: "wrong/trylockpoll", fails: []string{"once", "two-shelves", "explore"}, maybe: map[string]string{
		"switches": realSleeps,
	}},
	entry{dir: "wrong/lockpool", fails: []string{"apart"}},
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
	entry{dir: "wrong/claim-flag", fails: []string{"race", "switches", "explore"}},
	entry{dir: "wrong/cond-lost-wakeup", fails: []string{"switches"}},
	entry{dir: "wrong/unlock-then-fill", fails: []string{"switches", "explore"}},
	// A second set written blind for issue 26, after the switches check.
	entry{dir: "wrong/delete-then-publish", fails: []string{"switches", "explore"}},
	entry{dir: "wrong/close-before-store", fails: []string{"switches", "explore"}},
)
