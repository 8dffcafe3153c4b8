package library

var _ = register(1,
	entry{dir: "shipped", fails: []string{"once", "two-shelves", "explore", "switches"}},
	entry{dir: "wrong/globallock", fails: []string{"apart", "explore", "switches"}},
	entry{dir: "wrong/nosecondlook", fails: []string{"once", "two-shelves", "explore", "switches"}},
	entry{dir: "wrong/unguardedread", fails: []string{"race"}},
	// The burst checks play one goroutine at a time (harness.OneAtATime):
	// an unguarded map is never written by two at once there, so only the
	// race detector (and, for the lock table, the explorer) sees these.
	entry{dir: "wrong/unlockedfastpath", fails: []string{"race"}},
	entry{dir: "wrong/unguardedlocks", fails: []string{"race", "switches", "explore"}},
	entry{dir: "wrong/keyless", fails: []string{"two-shelves", "apart", "explore", "switches"}},
	entry{dir: "wrong/emptywaiters", fails: []string{"served", "two-shelves", "explore", "switches"}},
	entry{dir: "wrong/waittimeout", fails: []string{"once", "two-shelves"}},
	entry{dir: "wrong/timeouterror", fails: []string{"served", "two-shelves", "explore"}, maybe: map[string]string{
		"switches": realSleeps,
	}},
	entry{dir: "wrong/nevercached", fails: []string{"served", "once", "two-shelves", "explore", "switches"}},
	entry{dir: "wrong/namedresult", fails: []string{"served", "once", "two-shelves", "explore", "switches"}},
	entry{dir: "wrong/ctxkey", fails: []string{"once", "two-shelves", "switches", "explore"}},
	entry{dir: "wrong/hashflights", fails: []string{"two-shelves", "apart"}},
	entry{dir: "wrong/errfield", fails: []string{"race"}},
	// Its spinning visitors meet the hang bound in served, once and
	// two-shelves. Apart and race pass when they run (its flag is atomic,
	// and no shelf waits for another's query); they fail as not run when
	// a hang is found before they start, which depends on how many checks
	// run side by side: four on two cores, all of them on eight.
	entry{dir: "wrong/spinwait", fails: []string{"served", "once", "two-shelves", "switches", "explore"}, hangs: true},
	entry{dir: "wrong/explore-nocache", fails: []string{"once", "served", "two-shelves", "explore", "switches"}},
	entry{dir: "wrong/explore-stalecopy", fails: []string{"two-shelves", "explore", "switches"}},
	entry{dir: "right/owner"},
	entry{dir: "right/cow"},
	entry{dir: "right/perkey"},
	entry{dir: "right/singleflight"},
	entry{dir: "right/donechan"},
	entry{dir: "right/syncmap"},
	// Written blind for issue 26, each with its bug between two adjacent
	// statements: the explorer's schedule points open the gap.
	entry{dir: "wrong/cow-nolock", fails: []string{"switches", "explore"}},
	entry{dir: "wrong/sf-store-after-do", fails: []string{"switches", "explore"}},
	entry{dir: "wrong/trylock-look", fails: []string{"switches", "explore"}},
	// A second set written blind for issue 26, after the switches check.
	entry{dir: "wrong/syncmap-loadstore", fails: []string{"switches", "explore"}},
	entry{dir: "wrong/flag-nocas", fails: []string{"race", "switches", "explore"}},
)
