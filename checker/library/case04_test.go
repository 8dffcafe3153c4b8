package library

var _ = register(4,
	entry{dir: "shipped", fails: []string{"race"}},
	entry{dir: "wrong/mutexhits", fails: []string{"hits-shared"}},
	entry{dir: "wrong/fetchlockhits", fails: []string{"hits-shared"}},
	entry{dir: "wrong/packagemutex", maybe: map[string]string{
		"hits-shared": "the mutex is a package variable the checker cannot hold; only colliding hits show it",
	}},
	entry{dir: "wrong/writelockquery", fails: []string{"hit-apart", "apart"}},
	entry{dir: "wrong/upgrade", fails: []string{"served", "once", "hit-apart", "hits-shared", "two-shelves", "apart", "race", "rlock-once"}},
	entry{dir: "wrong/nosingleflight", fails: []string{"once", "two-shelves"}},
	entry{dir: "wrong/secondlookunguarded", fails: []string{"race"}},
	entry{dir: "wrong/chanlock", fails: []string{"hits-shared"}},
	entry{dir: "wrong/ownerhits", fails: []string{"hits-shared"}},
	// Seen spinning 160-odd times a run on two loaded cores; a run with
	// none would need every one of up to 400 looks to miss them all.
	entry{dir: "wrong/casspin", fails: []string{"hits-shared"}},
	entry{dir: "wrong/rlockquery", fails: []string{"hit-apart"}},
	entry{dir: "wrong/emptycopy", fails: []string{"served", "once", "two-shelves", "hit-apart", "hits-shared", "race", "rlock-once"}},
	entry{dir: "wrong/globalfill", fails: []string{"apart", "hit-apart"}},
	entry{dir: "wrong/nestedrlock", fails: []string{"rlock-once"}, maybe: map[string]string{
		"race":   "its hits meet real fills there, and deadlock only when a fill's Lock lands between a hit's two RLocks",
		"served": "a fill's Lock may land between a waiter's two RLocks",
		"once":   "a fill's Lock may land between a waiter's two RLocks",
	}},
	entry{dir: "right/perkey"},
	entry{dir: "right/singleflight"},
	entry{dir: "right/donechan"},
	entry{dir: "right/syncmap"},
	entry{dir: "right/snapshot"},
)
