package library

var _ = register(4,
	entry{dir: "shipped", fails: []string{"race"}},
	entry{dir: "wrong/mutexhits", fails: []string{"hits-shared"}},
	entry{dir: "wrong/fetchlockhits", fails: []string{"hits-shared"}},
	entry{dir: "wrong/packagemutex", fails: []string{"hits-shared"}}, // two hits in lockstep, one inside the mutex as the other asks
	entry{dir: "wrong/writelockquery", fails: []string{"hit-apart", "apart", "explore"}},
	entry{dir: "wrong/upgrade", fails: []string{"served", "once", "hit-apart", "hits-shared", "two-shelves", "apart", "race", "rlock-once", "explore", "switches"}},
	entry{dir: "wrong/nosingleflight", fails: []string{"once", "two-shelves", "explore", "switches"}},
	entry{dir: "wrong/secondlookunguarded", fails: []string{"race"}},
	entry{dir: "wrong/chanlock", fails: []string{"hits-shared"}},
	entry{dir: "wrong/ownerhits", fails: []string{"hits-shared"}},
	// Seen spinning 160-odd times a run on two loaded cores; a run with
	// none would need every one of up to 400 looks to miss them all.
	entry{dir: "wrong/casspin", fails: []string{"hits-shared"}},
	entry{dir: "wrong/rlockquery", fails: []string{"hit-apart", "explore", "switches"}},
	entry{dir: "wrong/emptycopy", fails: []string{"served", "once", "two-shelves", "hit-apart", "hits-shared", "race", "rlock-once", "switches", "explore"}},
	entry{dir: "wrong/globalfill", fails: []string{"apart", "hit-apart", "explore"}},
	// served, once, two-shelves, apart and hit-apart play one goroutine at
	// a time: no fill's Lock lands between a waiter's two RLocks there.
	// hits-shared and race play hits on processors side by side.
	entry{dir: "wrong/nestedrlock", fails: []string{"rlock-once", "switches", "explore"}, maybe: map[string]string{
		// hits-shared (a maybe until 5 December) runs no writer beside
		// its hits: the shelves are filled one at a time before, so a
		// hit's second RLock never waits there, every run (10 of 10).
		"race": "its hits meet real fills there, and deadlock only when a fill's Lock lands between a hit's two RLocks (switches opens it every run)",
	}},
	entry{dir: "wrong/explore-stalesnapshot", fails: []string{"two-shelves", "explore", "switches"}},
	entry{dir: "right/perkey"},
	entry{dir: "right/singleflight"},
	entry{dir: "right/donechan"},
	entry{dir: "right/syncmap"},
	entry{dir: "right/snapshot"},
	// Written blind for issue 26, each with its bug between two adjacent
	// statements: the explorer's schedule points open the gap.
	entry{dir: "wrong/cow-snapshot-before-lock", fails: []string{"switches", "explore"}},
	entry{dir: "wrong/drop-lock-before-fill", fails: []string{"switches", "explore"}},
	entry{dir: "wrong/flight-ptr-load-store", fails: []string{"switches", "explore"}},
	// A second set written blind for issue 26, after the switches check.
	entry{dir: "wrong/cow-stale-snapshot", fails: []string{"switches", "explore"}},
	entry{dir: "wrong/sf-no-second-look", fails: []string{"switches", "explore"}},
	entry{dir: "right/cow"},
	// A world as wide as the contract (issue 26): the database gains
	// shelves once the shop is open. catalog-locks passed every check
	// while the checks played only the catalog's sixteen; cowcalls was
	// written blind, right for any shelf.
	entry{dir: "wrong/catalog-locks", fails: []string{"apart"}},
	entry{dir: "right/cowcalls"},
)
