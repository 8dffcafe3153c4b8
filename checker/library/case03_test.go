package library

var _ = register(3,
	entry{dir: "shipped", fails: []string{"once", "one-round", "explore"}},
	entry{dir: "wrong/stampede", fails: []string{"once", "explore"}},
	entry{dir: "wrong/lookbeforelock", fails: []string{"once", "one-round", "explore"}},
	entry{dir: "wrong/unlockfirst", maybe: map[string]string{
		"explore":   "a visitor queries again only if it arrives in that gap, which the explorer stages now and then",
		"once":      "a waiter queries again only if it takes the lock in the gap before the cache is filled",
		"one-round": "the same",
	}},
	entry{dir: "wrong/emptywaiters", fails: []string{"served", "explore"}},
	entry{dir: "wrong/unguardedsecondlook", fails: []string{"race"}, maybe: map[string]string{
		"explore": "an unguarded map read beside a fill may crash the program (concurrent map read and map write) in some scene, or in none",
	}},
	entry{dir: "wrong/explore-freeonleave", fails: []string{"explore"}},
	entry{dir: "wrong/explore-keyless", fails: []string{"explore"}},
	entry{dir: "wrong/explore-stalecopy", fails: []string{"explore"}},
	entry{dir: "right/perkey"},
	entry{dir: "right/singleflight"},
	entry{dir: "right/donechan"},
	entry{dir: "right/syncmap"},
)
