package library

var _ = register(4,
	entry{dir: "shipped", fails: []string{"race"}},
	entry{dir: "wrong/mutexhits", fails: []string{"hits-shared"}},
	entry{dir: "wrong/fetchlockhits", fails: []string{"hits-shared"}},
	entry{dir: "wrong/packagemutex", maybe: map[string]string{
		"hits-shared": "the mutex is a package variable the checker cannot hold; only colliding hits show it",
	}},
	entry{dir: "wrong/writelockquery", fails: []string{"hit-apart", "explore"}},
	entry{dir: "wrong/upgrade", fails: []string{"served", "once", "hit-apart", "hits-shared", "race", "explore"}},
	entry{dir: "wrong/nosingleflight", fails: []string{"once", "explore"}},
	entry{dir: "wrong/secondlookunguarded", fails: []string{"race"}},
	entry{dir: "wrong/explore-stalesnapshot", fails: []string{"explore"}},
	entry{dir: "right/perkey"},
	entry{dir: "right/singleflight"},
	entry{dir: "right/donechan"},
	entry{dir: "right/syncmap"},
	entry{dir: "right/snapshot"},
)
