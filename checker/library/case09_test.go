package library

var _ = register(9,
	entry{dir: "shipped", fails: []string{"no-wait", "failed-rebuild", "explore"}},
	// The grace window, and who waits in it.
	entry{dir: "wrong/inline", fails: []string{"no-wait", "explore"}},
	// One rebuild per expiry for the fleet.
	entry{dir: "wrong/everyreader", fails: []string{"one-rebuild"}, maybe: map[string]string{
		"explore": "every stale reader's rebuild shows as two reads at once only where two readers come while a rebuild runs with a cost; 33 of 40 scenes (seeds 1001-1040), so a run of 8 scenes misses it with a chance near 1e-6, too close to promise every run",
	}},
	entry{dir: "wrong/perinstance", fails: []string{"one-rebuild"}, maybe: map[string]string{
		"explore": "one rebuild per instance shows only where stale readers of one shelf come on two instances while a rebuild runs; 24 of 40 scenes",
	}},
	entry{dir: "wrong/wallclock", fails: []string{"one-rebuild", "bounded", "detached", "explore"}},
	// The two expiries, and the delete that is neither.
	entry{dir: "wrong/memorycopy", fails: []string{"bounded", "delete", "failed-rebuild", "explore"}},
	entry{dir: "wrong/noexpiry", fails: []string{"bounded", "failed-rebuild", "ttl", "explore"}},
	entry{dir: "wrong/gracekey", fails: []string{"delete", "explore"}},
	entry{dir: "wrong/markstale", fails: []string{"delete", "explore"}},
	// The rebuild in the background: its context and its failures.
	entry{dir: "wrong/requestctx", fails: []string{"detached", "explore"}},
	entry{dir: "wrong/dropstale", fails: []string{"failed-rebuild"}, maybe: map[string]string{
		"explore": "a failed rebuild that drops the stale value shows only in scenes whose source is down at the expiry; 8 of 40 scenes",
	}},
	entry{dir: "wrong/cachefailure", fails: []string{"failed-rebuild"}, maybe: map[string]string{
		"explore": "a failure written to Redis shows only in scenes whose source is down at the expiry; 9 of 40 scenes",
	}},
	// Case 6's lock, still needed on a cold miss.
	entry{dir: "wrong/plaindel", fails: []string{"holder-only"}},
	entry{dir: "wrong/nobound", fails: []string{"budget"}, maybe: map[string]string{
		"explore":        "a poll with no bound hangs only where a cold miss meets a holder that never fills; 1 of 40 scenes",
		"failed-rebuild": "past the physical expiry with the source down, the instance whose flight lost the lock polls for ever; when its flight tries the lock only after the winner's failed query released it, it fails too and answers",
	}},
	entry{dir: "wrong/setthenexpire", fails: []string{"ttl", "explore"}},
	entry{dir: "wrong/keepttl", fails: []string{"ttl"}, maybe: map[string]string{
		"explore": "the list vanishing 60 s after the first fill shows only where a reader comes between that moment and the next fill; 22 of 40 scenes",
	}},
	entry{dir: "wrong/refreshforever", fails: []string{"ttl", "explore"}},
	entry{dir: "wrong/racyflag", fails: []string{"race"}, maybe: map[string]string{
		"explore": "one refresh flag for every shelf of an instance shows only where a stale reader of one shelf comes while another shelf's refresh runs on its instance; 7 of 40 scenes",
		"no-wait": "the race detector writes its first report while the burst settles; on a loaded machine (load 40) that once outlasted the 5 s hang bound",
	}},
	// Found only by the explorer's random scenes.
	entry{dir: "wrong/explore-deadline", fails: []string{"explore"}},
	entry{dir: "wrong/explore-onelock", fails: []string{"explore"}},
	entry{dir: "wrong/explore-nearcache", fails: []string{"explore"}},
	entry{dir: "wrong/explore-oneflight", maybe: map[string]string{
		"explore": "one refresh flight for every shelf of an instance shows only where a stale reader of one shelf comes while another shelf's refresh runs on its instance; 18 of 40 scenes",
	}},
	entry{dir: "right/refresher"},
	entry{dir: "right/early"},
	entry{dir: "right/localflight"},
)
