package library

var _ = register(3,
	entry{dir: "shipped", fails: []string{"once", "one-round", "two-shelves"}},
	entry{dir: "wrong/stampede", fails: []string{"once", "two-shelves"}},
	entry{dir: "wrong/lookbeforelock", fails: []string{"once", "one-round", "two-shelves"}},
	entry{dir: "wrong/unlockfirst", maybe: map[string]string{
		"once":      "a waiter queries again only if it takes the lock in the gap before the cache is filled",
		"one-round": "the same",
	}},
	entry{dir: "wrong/emptywaiters", fails: []string{"served", "two-shelves"}},
	entry{dir: "wrong/unguardedsecondlook", fails: []string{"race"}},
	entry{dir: "wrong/trylockpoll", fails: []string{"once"}, maybe: map[string]string{
		"two-shelves": realTime,
		"one-round":   realTime,
	}},
	entry{dir: "wrong/lockpool", fails: []string{"apart"}},
	entry{dir: "right/cond"},
	entry{dir: "right/perkey"},
	entry{dir: "right/singleflight"},
	entry{dir: "right/donechan"},
	entry{dir: "right/syncmap"},
)
