package library

var _ = register(4,
	entry{dir: "shipped", fails: []string{"race"}},
	entry{dir: "wrong/mutexhits", fails: []string{"hits-shared"}},
	entry{dir: "wrong/fetchlockhits", fails: []string{"hits-shared"}},
	entry{dir: "wrong/packagemutex", maybe: map[string]string{
		"hits-shared": "the mutex is a package variable the checker cannot hold; only colliding hits show it",
	}},
	entry{dir: "wrong/writelockquery", fails: []string{"hit-apart", "apart"}},
	entry{dir: "wrong/upgrade", fails: []string{"served", "once", "hit-apart", "hits-shared", "two-shelves", "apart", "race"}},
	entry{dir: "wrong/nosingleflight", fails: []string{"once", "two-shelves"}},
	entry{dir: "wrong/secondlookunguarded", fails: []string{"race"}},
	entry{dir: "wrong/chanlock", fails: []string{"hits-shared"}},
	entry{dir: "wrong/ownerhits", fails: []string{"hits-shared"}},
	entry{dir: "wrong/casspin", maybe: map[string]string{
		"hits-shared": "a spin lock is seen only when a look at the goroutines catches a hit yielding in it",
	}},
	entry{dir: "wrong/rlockquery", fails: []string{"hit-apart", "apart"}},
	entry{dir: "wrong/emptycopy", fails: []string{"served", "once", "two-shelves", "hit-apart", "hits-shared", "race"}},
	entry{dir: "wrong/globalfill", fails: []string{"apart", "hit-apart"}},
	entry{dir: "right/perkey"},
	entry{dir: "right/singleflight"},
	entry{dir: "right/donechan"},
	entry{dir: "right/syncmap"},
	entry{dir: "right/snapshot"},
)
