package library

var _ = register(6,
	entry{dir: "shipped", fails: []string{"fleet-once", "per-instance", "losers-wait", "lock-expires", "holder-only", "budget"}},
	entry{dir: "wrong/noexpiry", fails: []string{"lock-expires", "ttl"}},
	entry{dir: "wrong/setthenexpire", fails: []string{"ttl"}},
	entry{dir: "wrong/plaindel", fails: []string{"holder-only"}},
	entry{dir: "wrong/getthendel", fails: []string{"holder-only"}},
	entry{dir: "wrong/sametoken", fails: []string{"holder-only"}},
	entry{dir: "wrong/losersquery", fails: []string{"fleet-once", "losers-wait", "budget"}},
	entry{dir: "wrong/giveup", fails: []string{"fleet-once", "losers-wait"}, maybe: map[string]string{
		"per-instance": "a visitor who arrives after its instance's flight gave up starts another flight and another lock attempt; one who arrives before joins it",
	}},
	entry{dir: "wrong/nobound", fails: []string{"budget"}},
	entry{dir: "wrong/nosecondlook", fails: []string{"fleet-once"}},
	entry{dir: "wrong/pervisitor", fails: []string{"per-instance"}},
	entry{dir: "wrong/racylocal", fails: []string{"race"}},
	entry{dir: "wrong/norecover", fails: []string{"panic"}},
	entry{dir: "right/retrylock"},
	entry{dir: "right/luaacquire"},
)
