package library

var _ = register(4,
	entry{dir: "shipped", fails: []string{"race"}, maybe: map[string]string{
		"explore": "an unguarded map read beside a fill may crash the program (concurrent map read and map write) in some scene, or in none",
	}},
	entry{dir: "wrong/mutexhits", fails: []string{"hits-shared"}},
	entry{dir: "wrong/fetchlockhits", fails: []string{"hits-shared"}},
	entry{dir: "wrong/packagemutex", maybe: map[string]string{
		"hits-shared": "the mutex is a package variable the checker cannot hold; only colliding hits show it",
	}},
	entry{dir: "wrong/writelockquery", fails: []string{"hit-apart", "apart", "explore"}},
	entry{dir: "wrong/upgrade", fails: []string{"served", "once", "hit-apart", "hits-shared", "two-shelves", "apart", "race", "rlock-once", "explore", "switches"}},
	entry{dir: "wrong/nosingleflight", fails: []string{"once", "two-shelves", "explore", "switches"}},
	entry{dir: "wrong/secondlookunguarded", fails: []string{"race"}, maybe: map[string]string{
		"explore": "an unguarded map read beside a fill may crash the program (concurrent map read and map write) in some scene, or in none",
	}},
	entry{dir: "wrong/chanlock", fails: []string{"hits-shared"}, maybe: map[string]string{
		"explore": "whether a scene meets this bug depends on the schedule",
	}},
	entry{dir: "wrong/ownerhits", fails: []string{"hits-shared"}, maybe: map[string]string{
		"explore": "the explorer's small scenes (one to three shelves, queries of a few ms) may or may not meet this bug; the checks named beside it are the ones that catch it",
	}},
	// Seen spinning 160-odd times a run on two loaded cores; a run with
	// none would need every one of up to 400 looks to miss them all.
	entry{dir: "wrong/casspin", fails: []string{"hits-shared"}, maybe: map[string]string{
		"explore": "the explorer's small scenes (one to three shelves, queries of a few ms) may or may not meet this bug; the checks named beside it are the ones that catch it",
	}},
	entry{dir: "wrong/rlockquery", fails: []string{"hit-apart", "explore", "switches"}},
	entry{dir: "wrong/emptycopy", fails: []string{"served", "once", "two-shelves", "hit-apart", "hits-shared", "race", "rlock-once", "switches"}, maybe: map[string]string{
		"explore": "whether a scene meets this bug depends on the schedule",
	}},
	entry{dir: "wrong/globalfill", fails: []string{"apart", "hit-apart"}, maybe: map[string]string{
		"explore": "the explorer's small scenes (one to three shelves, queries of a few ms) may or may not meet this bug; the checks named beside it are the ones that catch it",
	}},
	entry{dir: "wrong/nestedrlock", fails: []string{"rlock-once", "switches"}, maybe: map[string]string{
		"explore":     "a fill's Lock may land between a visitor's two RLocks in some scene, or in none",
		"race":        "its hits meet real fills there, and deadlock only when a fill's Lock lands between a hit's two RLocks",
		"served":      "a fill's Lock may land between a waiter's two RLocks",
		"once":        "a fill's Lock may land between a waiter's two RLocks",
		"two-shelves": "a fill's Lock may land between a waiter's two RLocks (seen deadlocked in 1 run of 3)",
		"apart":       "the same",
		"hit-apart":   "the same",
		"hits-shared": "the same",
	}},
	entry{dir: "wrong/explore-stalesnapshot", fails: []string{"two-shelves", "explore", "switches"}},
	entry{dir: "right/perkey"},
	entry{dir: "right/singleflight"},
	entry{dir: "right/donechan"},
	entry{dir: "right/syncmap"},
	entry{dir: "right/snapshot"},
	// Written blind for issue 26, each with its bug between two adjacent
	// statements: the explorer's schedule points open the gap.
	entry{dir: "wrong/cow-snapshot-before-lock", fails: []string{"switches"}, maybe: map[string]string{
		"explore": randomPoints,
	}},
	entry{dir: "wrong/drop-lock-before-fill", fails: []string{"switches"}, maybe: map[string]string{
		"explore": randomPoints,
	}},
	entry{dir: "wrong/flight-ptr-load-store", fails: []string{"switches"}, maybe: map[string]string{
		"explore": randomPoints,
	}},
	// A second set written blind for issue 26, after the switches check.
	entry{dir: "wrong/cow-stale-snapshot", fails: []string{"switches"}, maybe: map[string]string{
		"explore": randomPoints,
	}},
	entry{dir: "wrong/sf-no-second-look", fails: []string{"switches"}, maybe: map[string]string{
		"explore": randomPoints,
	}},
	entry{dir: "right/cow"},
)
