package library

var _ = register(5,
	entry{dir: "shipped", fails: []string{"returns", "shared-error", "not-cached", "panic", "give-up", "starter-gives-up", "goexit", "explore", "switches"}},
	entry{dir: "wrong/deferunlock", fails: []string{"shared-error", "give-up", "starter-gives-up", "explore"}},
	entry{dir: "wrong/cachesfailure", fails: []string{"not-cached", "panic", "goexit", "explore", "switches"}},
	entry{dir: "wrong/retryeach", fails: []string{"shared-error", "explore"}},
	entry{dir: "wrong/waitersignorectx", fails: []string{"give-up", "goexit", "explore"}},
	entry{dir: "wrong/starterctx", fails: []string{"starter-gives-up", "goexit", "explore", "switches"}},
	entry{dir: "wrong/nodeferpanic", fails: []string{"panic", "goexit", "explore"}},
	// On a Goexit DoChan forgets the flight and answers nobody; its callers
	// leave by their deadlines, which the goexit check accepts (issue 28:
	// until then this entry failed it too).
	entry{dir: "wrong/dochanpanic", fails: []string{"panic", "race", "explore"}},
	// panic plays one goroutine at a time: every waiter reads the flight
	// after the recover has written its error (the race check sees the
	// write after the close).
	entry{dir: "wrong/deferorder", fails: []string{"race", "goexit", "explore"}},
	entry{dir: "wrong/goexitcached", fails: []string{"goexit"}},
	// Written for the goexit check's scene, each a slip a student makes
	// once told that recover cannot see a Goexit.
	// DoChan; the zero answer of a Goexit, cached. Its flight takes no
	// second look: a visitor who missed just before the fill landed starts
	// a flight of its own once the first is forgotten, a gap between two
	// statements, which panic's second burst met in 1 run of 12 when it
	// played on processors side by side; one goroutine at a time, never.
	entry{dir: "wrong/goexitzero", fails: []string{"goexit", "switches", "explore"}},
	entry{dir: "wrong/goexitnilnil", fails: []string{"goexit"}},                                 // told apart, and handed to the waiters as nil, nil
	entry{dir: "wrong/goexitstays", fails: []string{"goexit"}},                                  // landed on two paths, neither a Goexit's: the flight stays
	entry{dir: "wrong/goexitclosetwice", fails: []string{"goexit"}},                             // done closed in the Goexit branch and by defer: a crash
	entry{dir: "wrong/goexitrepanic", fails: []string{"goexit"}},                                // a panic on the flight's goroutine, which nobody recovers
	entry{dir: "wrong/dochanrecv", fails: []string{"goexit", "give-up", "explore", "switches"}}, // a bare receive from DoChan: no way out by the deadline
	// The entries below were written before the goexit check: they land
	// their flights by recover alone, so they fail it too.
	entry{dir: "wrong/panicstays", fails: []string{"panic", "goexit", "explore"}},
	entry{dir: "wrong/breaker", fails: []string{"not-cached", "goexit", "explore"}},
	entry{dir: "wrong/starterremoves", fails: []string{"starter-gives-up", "goexit", "switches", "explore"}},
	// pollctx looks at ctx.Err() every 2 s; in some runs a check meets the
	// hang bound, and the grader then starts no more checks: each of the
	// others passes, or is not run.
	entry{dir: "wrong/pollctx", fails: []string{"give-up", "goexit", "switches", "explore"}, hangs: true},
	entry{dir: "wrong/wrapv", fails: []string{"shared-error", "goexit", "switches", "explore"}},
	entry{dir: "wrong/istext", fails: []string{"shared-error", "goexit"}},
	entry{dir: "wrong/retryinflight", fails: []string{"shared-error", "goexit", "explore"}},
	entry{dir: "wrong/errdelete", fails: []string{"race", "goexit"}},
	entry{dir: "wrong/nevercache", fails: []string{"once", "two-shelves", "not-cached", "panic", "give-up", "starter-gives-up", "goexit", "explore", "switches"}},
	entry{dir: "wrong/lenkey", fails: []string{"two-shelves", "apart", "goexit", "switches", "explore"}},
	entry{dir: "wrong/onequery", fails: []string{"apart", "goexit"}},
	entry{dir: "wrong/explore-nocache", fails: []string{"give-up", "not-cached", "once", "panic", "starter-gives-up", "two-shelves", "explore", "switches"}},
	entry{dir: "wrong/explore-canceledonly", fails: []string{"explore", "switches"}},
	entry{dir: "wrong/explore-starterforgets", fails: []string{"starter-gives-up", "explore", "switches"}},
	entry{dir: "wrong/explore-staleflight", fails: []string{"explore"}},
	entry{dir: "right/dochan"},
	// Right by the goexit check's rule: after a Goexit their waiters leave
	// by their own deadlines, as x/sync/singleflight's DoChan callers do.
	// dochanwaits was a known-wrong entry until issue 28 gave the check's
	// visitors a deadline.
	entry{dir: "right/dochanwaits"},
	entry{dir: "right/dochanforget"},
	entry{dir: "right/forgetflight"},
	entry{dir: "right/owner"},
	entry{dir: "right/perkey"},
	entry{dir: "right/singleflight"},
	entry{dir: "right/donechan"},
	// The explorer failed it once (seed 183839): its flight's "returned"
	// flag was shadowed by the cache check's own ok, so a flight that found
	// the cache filled told its visitors the query never returned. Fixed;
	// the slip itself is wrong/explore-shadowedok.
	entry{dir: "right/syncmap"},
	entry{dir: "wrong/explore-shadowedok", fails: []string{"switches", "explore"}},
	// Written blind for issue 26, each with its bug between two adjacent
	// statements: the explorer's schedule points open the gap.
	entry{dir: "wrong/forget-before-publish", fails: []string{"switches", "explore"}},
	entry{dir: "wrong/refcount-abandon", fails: []string{"switches", "explore"}},
	// A second set written blind for issue 26, after the switches check.
	entry{dir: "wrong/once-swap-nocas", fails: []string{"switches", "explore"}},
	entry{dir: "wrong/rw-no-recheck", fails: []string{"switches", "explore"}},
	// A world as wide as the contract (issue 26): the database gains
	// shelves once the shop is open. hash-slots passed every check while
	// the checks played only the catalog's sixteen; syncmapflight was
	// written blind, right for any shelf.
	entry{dir: "wrong/hash-slots", fails: []string{"two-shelves", "apart"}},
	entry{dir: "right/syncmapflight"},
)
