package library

// Case 7 runs on virtual time with seeded random sources, so every verdict
// below is the same in every run: none depends on the schedule.
var _ = register(7,
	entry{dir: "shipped", fails: []string{"no-wait", "delta", "beta"}},
	entry{dir: "wrong/fixedwindow", fails: []string{"per-window", "delta", "beta", "one-flight"}},
	entry{dir: "wrong/logzero", fails: []string{"per-window", "late"}},
	entry{dir: "wrong/signflip", fails: []string{"per-window", "late", "delta", "beta"}},
	entry{dir: "wrong/fixeddelta", fails: []string{"no-wait", "delta", "beta"}},
	entry{dir: "wrong/nobeta", fails: []string{"beta"}},
	entry{dir: "wrong/nosingleflight", fails: []string{"per-window", "one-flight"}},
	entry{dir: "wrong/missstampede", fails: []string{"per-window", "one-flight"}},
	entry{dir: "wrong/stale", fails: []string{"no-wait", "delta", "beta"}},
	entry{dir: "wrong/forever", fails: []string{"no-wait", "per-window", "late", "delta", "beta"}},
	entry{dir: "wrong/racy", fails: []string{"race"}},
	entry{dir: "right/inline"},
	entry{dir: "right/redraw"},
	entry{dir: "right/xsync"},
	entry{dir: "right/closedform"},
	entry{dir: "right/refresher"},
)
