package library

var _ = register(10,
	entry{dir: "shipped", fails: []string{"delete-not-set", "stale-set", "slow-leader", "lease-coalesces"}},
	// The three races.
	entry{dir: "wrong/deletebefore", fails: []string{"delete-after-commit"}},
	entry{dir: "wrong/setonwrite", fails: []string{"delete-not-set", "stale-set"}},
	entry{dir: "wrong/deleteafter", fails: []string{"stale-set", "lease-coalesces"}},
	// Leases done wrong.
	entry{dir: "wrong/getthenset", fails: []string{"stale-set"}},
	entry{dir: "wrong/keeplease", fails: []string{"stale-set"}},
	entry{dir: "wrong/sametoken", fails: []string{"slow-leader", "tokens"}},
	entry{dir: "wrong/losersquery", fails: []string{"lease-coalesces"}},
	entry{dir: "wrong/nobound", fails: []string{"lease-coalesces", "slow-leader", "ttl"}},
	// Versions, delays and times to live.
	entry{dir: "wrong/textversion", fails: []string{"delete-after-commit", "delete-not-set", "stale-set", "slow-leader"}},
	entry{dir: "wrong/doubledelete", fails: []string{"stale-set", "lease-coalesces"}},
	entry{dir: "wrong/nottl", fails: []string{"ttl"}},
	entry{dir: "wrong/expirelater", fails: []string{"ttl"}},
	entry{dir: "wrong/racy", fails: []string{"race"}},
	entry{dir: "wrong/seededtoken", fails: []string{"tokens"}},
	// Right answers written otherwise than the reference.
	entry{dir: "right/versioncas"},
	entry{dir: "right/fencing"},
	entry{dir: "right/luaops"},
)
