package library

var _ = register(9,
	entry{dir: "shipped", fails: []string{"no-wait", "failed-rebuild"}},
	// The grace window, and who waits in it.
	entry{dir: "wrong/inline", fails: []string{"no-wait"}},
	// One rebuild per expiry for the fleet.
	entry{dir: "wrong/everyreader", fails: []string{"one-rebuild"}},
	entry{dir: "wrong/perinstance", fails: []string{"one-rebuild"}},
	entry{dir: "wrong/wallclock", fails: []string{"one-rebuild", "bounded", "detached"}},
	// The two expiries, and the delete that is neither.
	entry{dir: "wrong/memorycopy", fails: []string{"bounded", "delete", "failed-rebuild"}},
	entry{dir: "wrong/noexpiry", fails: []string{"bounded", "failed-rebuild", "ttl"}},
	entry{dir: "wrong/gracekey", fails: []string{"delete"}},
	entry{dir: "wrong/markstale", fails: []string{"delete"}},
	// The rebuild in the background: its context and its failures.
	entry{dir: "wrong/requestctx", fails: []string{"detached"}},
	entry{dir: "wrong/dropstale", fails: []string{"failed-rebuild"}},
	entry{dir: "wrong/cachefailure", fails: []string{"failed-rebuild"}},
	// Case 6's lock, still needed on a cold miss.
	entry{dir: "wrong/plaindel", fails: []string{"holder-only"}},
	entry{dir: "wrong/nobound", fails: []string{"budget"}, maybe: map[string]string{
		"failed-rebuild": "past the physical expiry with the source down, the instance whose flight lost the lock polls for ever; when its flight tries the lock only after the winner's failed query released it, it fails too and answers",
	}},
	entry{dir: "wrong/setthenexpire", fails: []string{"ttl"}},
	entry{dir: "wrong/keepttl", fails: []string{"ttl"}},
	entry{dir: "wrong/refreshforever", fails: []string{"ttl"}},
	entry{dir: "wrong/racyflag", fails: []string{"race"}, maybe: map[string]string{
		"no-wait": "the race detector writes its first report while the burst settles; on a loaded machine (load 40) that once outlasted the 5 s hang bound",
	}},
	// Found only by the explorer's random scenes.
	entry{dir: "wrong/explore-deadline", fails: []string{"explore"}},
	entry{dir: "wrong/explore-onelock", fails: []string{"explore"}},
	entry{dir: "wrong/explore-nearcache", fails: []string{"explore"}},
	entry{dir: "wrong/explore-oneflight", fails: []string{"explore"}},
	entry{dir: "right/refresher"},
	entry{dir: "right/early"},
	entry{dir: "right/localflight"},
)
