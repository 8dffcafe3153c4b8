package library

// Case 8. The spread checks are statistical: each fails a correct uniform
// draw with a chance below 1e-6 (checker/case08/spread.go says how), and
// every wrong answer below misses its bound by a factor of three or more,
// so no verdict here depends on the draw. The counting checks hold every
// query at a gate and count once the readers have settled.
var _ = register(8,
	entry{dir: "shipped", fails: []string{"warm-spread", "rebuild-ttl", "once", "at-most"}},
	// Times to live: below the floor, past 35 s, or not spread.
	entry{dir: "wrong/subtract", fails: []string{"warm-ttl", "rebuild-ttl"}},
	entry{dir: "wrong/toowide", fails: []string{"warm-ttl", "rebuild-ttl"}},
	entry{dir: "wrong/fixedseed", fails: []string{"warm-spread", "rebuild-ttl"}},
	entry{dir: "wrong/wholeseconds", fails: []string{"warm-spread", "rebuild-ttl"}},
	entry{dir: "wrong/floatcast", fails: []string{"warm-spread", "rebuild-ttl"}},
	entry{dir: "wrong/setex", fails: []string{"warm-spread", "rebuild-ttl"}},
	entry{dir: "wrong/narrow", fails: []string{"warm-spread", "rebuild-ttl"}},
	entry{dir: "wrong/onedraw", fails: []string{"warm-spread"}},
	entry{dir: "wrong/warmonly", fails: []string{"rebuild-ttl"}},
	// The cold start: one query per page, at most 20 at once, more than 1.
	entry{dir: "wrong/noflight", fails: []string{"once"}},
	entry{dir: "wrong/afterquery", fails: []string{"at-most"}},
	entry{dir: "wrong/releasefirst", fails: []string{"at-most"}},
	entry{dir: "wrong/bigpool", fails: []string{"at-most"}},
	entry{dir: "wrong/perpage", fails: []string{"at-most"}},
	entry{dir: "wrong/nobound", fails: []string{"at-most"}},
	entry{dir: "wrong/globallock", fails: []string{"parallel"}},
	// Every reader served, within a budget, with a typed error past it.
	entry{dir: "wrong/waitforever", fails: []string{"budget"}},
	entry{dir: "wrong/untyped", fails: []string{"budget"}},
	entry{dir: "wrong/do", fails: []string{"budget"}},
	entry{dir: "wrong/shortbudget", fails: []string{"values"}},
	entry{dir: "wrong/emptywaiters", fails: []string{"rebuild-ttl", "values", "race"}}, // its own reader waits on the flight too
	// Right answers written otherwise than the reference.
	entry{dir: "right/weighted"},
	entry{dir: "right/errgroup"},
	entry{dir: "right/workers"},
)
