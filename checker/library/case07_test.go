package library

// Case 7 runs on virtual time with seeded random sources, so every verdict
// below is the same in every run: none depends on the schedule. Most
// known-wrong entries were written from the reference before it recovered
// a panicking recompute, and fail "panic" as well as their own check.
var _ = register(7,
	entry{dir: "shipped", fails: []string{"no-wait", "delta", "beta"}},
	entry{dir: "wrong/fixedwindow", fails: []string{"per-window", "delta", "beta", "one-flight", "panic"}},
	entry{dir: "wrong/logzero", fails: []string{"per-window", "late", "panic"}},
	entry{dir: "wrong/signflip", fails: []string{"per-window", "late", "delta", "beta", "panic"}},
	entry{dir: "wrong/fixeddelta", fails: []string{"no-wait", "delta", "beta", "panic"}},
	entry{dir: "wrong/nobeta", fails: []string{"beta", "panic"}},
	entry{dir: "wrong/nosingleflight", fails: []string{"per-window", "one-flight", "panic"}},
	entry{dir: "wrong/missstampede", fails: []string{"per-window", "one-flight", "panic"}},
	entry{dir: "wrong/stale", fails: []string{"no-wait", "delta", "beta", "panic"}},
	entry{dir: "wrong/forever", fails: []string{"no-wait", "per-window", "late", "delta", "beta", "panic"}},
	entry{dir: "wrong/racy", fails: []string{"race", "panic"}},
	entry{dir: "wrong/norecover", fails: []string{"panic"}},
	entry{dir: "wrong/flightleft", fails: []string{"panic"}},
	entry{dir: "right/inline"},
	entry{dir: "right/redraw"},
	entry{dir: "right/xsync"},
	entry{dir: "right/closedform"},
	entry{dir: "right/refresher"},
)
