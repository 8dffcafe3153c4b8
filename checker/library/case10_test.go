package library

// The wrong entries written before issue 25 copy the reference as it was
// then: besides their own mistake, each answers a visitor past its budget
// with an untyped error, or reads the row itself, or never returns, and so
// fails come-back; most keep its lease after a failed or
// cancelled read (let-go), its retry of a refused fill with no budget
// (conflict-budget) and its lease that lapses under a slow read
// (slow-read), and its delete on the writer's own context
// (writer-leaves), and their rows say so. Keeping the lease after a
// failed read is also a backoff, so those pass db-down; the shipped code
// and the entries with no lease (deleteafter, doubledelete) read the
// failing database once per visitor, and so, each by its own mistake, do
// losersquery, nobound, textversion and explore-oneversion. And none of
// them gives its read a deadline: a visitor of theirs whose read hangs
// waits for good (hung-read). Those with no lease (the shipped
// code, deleteafter, doubledelete) skip let-go, having none to let go,
// and fail slow-read's second scene instead: a slow read that a write
// overtook is stored. evalsha-one-script's lease (5 s) outlasts the 4.5 s
// read but not the contract's slowest (5 s and its 5 ms reply): with no
// keepalive its fill is refused and its visitor, with no deadline, reads
// again for good, so it fails slow-read's last scene; and the lease it
// keeps after a failed read outlasts db-down's 2 s outage, so a visitor
// after the database is back is told to try again. explore-oneversion
// judges a fill by the row's version, not by its lock, and passes
// slow-read. Those
// that skip conflict-budget store the fill its scene means to see refused,
// so the scene never happens: they have no lease (the shipped code,
// deleteafter, doubledelete), their write ends no lease (setonwrite,
// keeplease), or their version compare lets the fill through
// (textversion); stale-set fails that store. explore-oneversion refuses
// the fill and serves the row it read, once: it passes. Every whole file
// here was written before the outbox and has no Relay: each fails outbox.
// switches' one scene (two visitors of one instance miss one book; a
// write on another ends the lease of the one still reading) is a stale
// set or a broken rule for every whole file that gets the races or the
// lease wrong, in its first play; deletebefore and lease-before-commit
// break one only under a switch. The patches of today's reference pass
// it; token-add-load fails it by its own gap, under a switch.
var _ = register(10,
	entry{dir: "shipped", fails: []string{"one-wait", "delete-not-set", "stale-set", "invalidate-steps", "slow-leader", "lease-coalesces", "explore", "slow-read", "db-down", "hung-read", "outbox", "come-back", "switches"}, skips: []string{"let-go", "conflict-budget", "second-look-lets-go"}},
	// The three races.
	entry{dir: "wrong/deletebefore", fails: []string{"one-wait", "delete-after-commit", "invalidate-steps", "explore", "let-go", "conflict-budget", "second-look-lets-go", "slow-read", "hung-read", "outbox", "come-back", "switches"}},
	entry{dir: "wrong/setonwrite", fails: []string{"one-wait", "delete-not-set", "stale-set", "invalidate-steps", "let-go", "second-look-lets-go", "explore", "slow-read", "writer-leaves", "hung-read", "outbox", "come-back", "switches"}, skips: []string{"conflict-budget"}},
	entry{dir: "wrong/deleteafter", fails: []string{"one-wait", "stale-set", "invalidate-steps", "lease-coalesces", "explore", "slow-read", "writer-leaves", "db-down", "hung-read", "outbox", "come-back", "switches"}, skips: []string{"let-go", "conflict-budget", "second-look-lets-go"}},
	// Leases done wrong.
	entry{dir: "wrong/getthenset", fails: []string{"one-wait", "stale-set", "let-go", "conflict-budget", "second-look-lets-go", "slow-read", "writer-leaves", "hung-read", "outbox", "come-back"}},
	entry{dir: "wrong/keeplease", fails: []string{"one-wait", "stale-set", "invalidate-steps", "let-go", "second-look-lets-go", "explore", "slow-read", "writer-leaves", "hung-read", "outbox", "come-back", "switches"}, skips: []string{"conflict-budget"}},
	entry{dir: "wrong/sametoken", fails: []string{"one-wait", "slow-leader", "tokens", "let-go", "conflict-budget", "second-look-lets-go", "explore", "slow-read", "writer-leaves", "hung-read", "outbox", "come-back", "switches"}},
	entry{dir: "wrong/losersquery", fails: []string{"one-wait", "lease-coalesces", "explore", "conflict-budget", "slow-read", "writer-leaves", "db-down", "let-go", "hung-read", "outbox", "come-back", "switches"}},
	entry{dir: "wrong/nobound", fails: []string{"one-wait", "lease-coalesces", "slow-leader", "ttl", "explore", "let-go", "conflict-budget", "second-look-lets-go", "slow-read", "hung-read", "writer-leaves", "db-down", "outbox", "come-back", "switches"}},
	// Versions, delays and times to live.
	entry{dir: "wrong/textversion", fails: []string{"one-wait", "delete-after-commit", "delete-not-set", "stale-set", "invalidate-steps", "slow-leader", "restart", "explore", "let-go", "slow-read", "writer-leaves", "db-down", "hung-read", "outbox", "come-back", "switches"}, skips: []string{"conflict-budget", "second-look-lets-go"}},
	entry{dir: "wrong/doubledelete", fails: []string{"one-wait", "stale-set", "invalidate-steps", "lease-coalesces", "explore", "slow-read", "db-down", "hung-read", "outbox", "come-back", "switches"}, skips: []string{"let-go", "conflict-budget", "second-look-lets-go"}},
	entry{dir: "wrong/nottl", fails: []string{"one-wait", "ttl", "explore", "let-go", "conflict-budget", "second-look-lets-go", "slow-read", "writer-leaves", "hung-read", "outbox", "come-back", "switches"}},
	entry{dir: "wrong/expirelater", fails: []string{"one-wait", "ttl", "explore", "let-go", "conflict-budget", "second-look-lets-go", "slow-read", "writer-leaves", "hung-read", "outbox", "come-back", "switches"}},
	// Its unguarded map is written by every reader as it arrives; lease-coalesces
	// and come-back play their readers one at a time (harness.OneAtATime),
	// so that it never crashes there, in every run: the race check is its verdict.
	entry{dir: "wrong/racy", fails: []string{"race"}},
	entry{dir: "wrong/seededtoken", fails: []string{"one-wait", "tokens", "let-go", "conflict-budget", "second-look-lets-go", "slow-read", "writer-leaves", "hung-read", "outbox", "come-back"}},
	// Between a write's commands after its commit, and a Redis restart.
	// Each passed every other hand-built check.
	// two-dels-price-first and getthenset need a fill to land within one
	// instant of a write's commands, which the explorer met in some runs
	// (13 of 16, and about 1 scene in 90) while the Go scheduler ran the
	// scene's goroutines at once, and in none under its schedule points;
	// the checks named catch them in every run.
	entry{dir: "wrong/two-dels-price-first", fails: []string{"one-wait", "invalidate-steps", "let-go", "conflict-budget", "second-look-lets-go", "slow-read", "writer-leaves", "hung-read", "outbox", "come-back"}},
	entry{dir: "wrong/lease-before-commit", fails: []string{"one-wait", "invalidate-steps", "let-go", "conflict-budget", "second-look-lets-go", "explore", "slow-read", "hung-read", "outbox", "come-back", "switches"}},
	entry{dir: "wrong/evalsha-startup-load", fails: []string{"one-wait", "restart", "let-go", "conflict-budget", "second-look-lets-go", "slow-read", "writer-leaves", "hung-read", "outbox", "come-back"}},
	entry{dir: "wrong/evalsha-one-script", fails: []string{"one-wait", "restart", "let-go", "conflict-budget", "writer-leaves", "hung-read", "slow-read", "db-down", "outbox", "come-back"}},
	entry{dir: "wrong/evalsha-reload-once", fails: []string{"one-wait", "restart", "let-go", "conflict-budget", "second-look-lets-go", "slow-read", "writer-leaves", "hung-read", "outbox", "come-back"}},
	// Issue 25: a filler under the faults the chapter is about. The first
	// of each pair is the reference as it was before.
	entry{dir: "wrong/keepslease-onfailure", fails: []string{"let-go"}},
	entry{dir: "wrong/secondlook-keeps-lease", fails: []string{"second-look-lets-go"}},
	entry{dir: "wrong/letgo-visitorctx", fails: []string{"let-go"}},
	entry{dir: "wrong/letgo-dbonly", fails: []string{"let-go"}},
	entry{dir: "wrong/letgo-plaindel", fails: []string{"let-go"}},
	entry{dir: "wrong/letgo-readerror-only", fails: []string{"let-go"}},
	entry{dir: "wrong/conflict-nobudget", fails: []string{"conflict-budget"}},
	entry{dir: "wrong/conflict-resetbudget", fails: []string{"conflict-budget"}},
	entry{dir: "wrong/cross-slot", fails: []string{"one-slot"}},
	entry{dir: "wrong/cross-slot-half-tag", fails: []string{"one-slot"}},
	entry{dir: "wrong/cross-slot-whole-braces", fails: []string{"one-slot"}},
	entry{dir: "wrong/cross-slot-watch", fails: []string{"one-slot"}},
	entry{dir: "wrong/cross-slot-argv-key", fails: []string{"one-slot"}, server: &onServer{
		fails: []string{"lease-coalesces", "slow-read", "explore"}, skips: []string{"second-look-lets-go"},
		why: "on a real server every key a shop names is put under the scene's namespace, but its script " +
			"writes the price under the bare name it was given in ARGV: no visitor ever finds a fill",
	}},
	// A filler whose database is slow or stuck: its lease kept alive while
	// it reads (slow-read), and only while the read may still end
	// (hung-read). lease-lapses-under-read is the reference before.
	entry{dir: "wrong/lease-lapses-under-read", fails: []string{"slow-read", "hung-read"}},
	entry{dir: "wrong/keepalive-every-ttl", fails: []string{"slow-read"}},
	entry{dir: "wrong/read-timeout-budget", fails: []string{"slow-read"}},
	entry{dir: "wrong/keepalive-set", fails: []string{"slow-read", "let-go"}},
	entry{dir: "wrong/keepalive-set-xx", fails: []string{"slow-read", "let-go"}},
	entry{dir: "wrong/keepalive-unbounded", fails: []string{"hung-read"}},
	entry{dir: "wrong/keepalive-leaks", fails: []string{"slow-read", "let-go"}},
	// A second blind round, after those checks (renew-to-30s and
	// backoff-on-every-giveup, made in the reference).
	entry{dir: "wrong/keepalive-long-renewal", fails: []string{"slow-read"}},
	entry{dir: "wrong/backoff-on-every-giveup", fails: []string{"let-go"}},
	// A write whose visitor leaves during its commit: the commit stands,
	// and the delete must go on a context of its own.
	entry{dir: "wrong/writer-ctx-delete", fails: []string{"writer-leaves"}},
	// A database that fails: the fleet backs off from it.
	entry{dir: "wrong/failed-read-no-backoff", fails: []string{"db-down"}},
	entry{dir: "wrong/backoff-in-memory", fails: []string{"one-wait", "db-down", "slow-read", "outbox", "come-back"}},
	// The same, turning the instance's own visitors away meanwhile: 24
	// reads, caught since db-down's bound gives no instance a read more.
	// The explorer fails it too: a visitor after a scene is refused for
	// the backoff of a read the fleet has since redone.
	entry{dir: "wrong/backoff-in-memory-strict", fails: []string{"db-down", "explore"}},
	entry{dir: "wrong/backoff-plain-pexpire", fails: []string{"let-go"}},
	entry{dir: "wrong/read-deadline-5s", fails: []string{"slow-read"}},
	entry{dir: "wrong/read-deadline-25s", fails: []string{"hung-read"}},
	// The third blind round's survivors, caught since: a visitor's deadline
	// taken for a failing database, a backoff past the contract's half
	// second, and a keepalive that ends at its first failed renewal.
	entry{dir: "wrong/deadline-as-dbfail", fails: []string{"one-wait", "let-go"}},
	entry{dir: "wrong/backoff-one-second", fails: []string{"let-go"}},
	entry{dir: "wrong/keepalive-stops-on-error", fails: []string{"slow-read"}},
	// The outbox relay, for a writer that dies after its commit.
	entry{dir: "wrong/relay-own-instance", fails: []string{"outbox"}},
	entry{dir: "wrong/relay-mark-first", fails: []string{"outbox"}},
	entry{dir: "wrong/relay-price-only", fails: []string{"outbox"}},
	entry{dir: "wrong/relay-gives-up", fails: []string{"outbox"}},
	entry{dir: "wrong/relay-hot-poll", fails: []string{"outbox"}},
	entry{dir: "wrong/relay-ignores-ctx", fails: []string{"outbox"}},
	// Written blind for issue 26: a relay whose backoff is never set back.
	entry{dir: "wrong/relay-backoff-never-reset", fails: []string{"outbox"}},
	entry{dir: "wrong/relay-backoff-uncapped", fails: []string{"outbox"}},
	entry{dir: "wrong/relay-backoff-cap-5s", fails: []string{"outbox"}},
	entry{dir: "wrong/relay-newest-only", fails: []string{"outbox"}},
	entry{dir: "wrong/relay-drops-row-after-3", fails: []string{"outbox"}},
	// Written blind for the outbox check.
	entry{dir: "wrong/relay-batch-del", fails: []string{"one-slot"}},
	entry{dir: "wrong/relay-go-per-row", fails: []string{"outbox"}},
	entry{dir: "wrong/relay-deadline-once", fails: []string{"outbox"}},
	entry{dir: "wrong/relay-claim-30s", fails: []string{"outbox"}},
	entry{dir: "wrong/setprice-marks-book", fails: []string{"outbox"}},
	// An instance's visitors of a book share one wait (issue 25, finding
	// 11): poll-per-visitor is the reference before.
	entry{dir: "wrong/poll-per-visitor", fails: []string{"one-wait"}},
	entry{dir: "wrong/flight-first-ctx", fails: []string{"one-wait", "let-go"}, maybe: map[string]string{
		// A random scene fails it when a flight's first visitor leaves,
		// or its deadline passes, while another waits (seed 5 of 24).
		"explore": "only in scenes where a flight's first visitor leaves before the others",
	}},
	entry{dir: "wrong/instance-lock", fails: []string{"one-wait", "db-down", "come-back"}},
	entry{dir: "wrong/flight-rejoin", fails: []string{"one-wait", "let-go"}},
	// A flight looked up and made in two critical sections: one-wait's
	// two visitors at one instant, in lockstep, try the lease twice.
	entry{dir: "wrong/join-lookup-insert", fails: []string{"one-wait"}},
	entry{dir: "wrong/fixed-polls", fails: []string{"one-wait"}},
	entry{dir: "wrong/flight-outlives-visitors", fails: []string{"let-go"}},
	entry{dir: "wrong/flight-budget-shared", fails: []string{"one-wait"}},
	// Written blind for one-wait (its other six were caught, or right).
	entry{dir: "wrong/channel-turn", fails: []string{"one-wait"}},
	entry{dir: "wrong/jitter-fixed-seed", fails: []string{"one-wait"}},
	// Blind for issue 26 (6 December, evening): a delete detached only
	// from a cancel, not a deadline (writer-leaves's deadline scene), and
	// a lease tagged with the price key's name (one-slot's braced book).
	entry{dir: "wrong/write-detach-only-if-canceled", fails: []string{"writer-leaves"}},
	entry{dir: "wrong/lease-tag-is-price-key", fails: []string{"one-slot"}},
	// Right answers written otherwise than the reference.
	entry{dir: "right/versioncas", skips: []string{"second-look-lets-go"}},
	entry{dir: "right/fencing", skips: []string{"second-look-lets-go"}},
	entry{dir: "right/luaops"},
	entry{dir: "right/twodels-leasefirst"},
	entry{dir: "right/evalsha-reload"},
	entry{dir: "right/writerlease"},
	entry{dir: "right/relay-bybook"},
	// Issue 12: the explorer. Caught only in scenes no hand-built check
	// stages: an instance that has seen the old price before another
	// instance's write (restart's rounds, which ask every instance after
	// a write, now catch it too), a book first filled after another book's
	// write, a reader whose deadline passes while another reads the row. Each is
	// caught in at least 70% of the scenes (42, 42 and 50 of 60; see
	// TestExploreRates and docs/explorer.md), so one run of 24 scenes misses
	// with a chance of about 0.3^24, 3e-13 (below 6e-8 even at half). The
	// entries above that fail explore are caught in 67% of the scenes or
	// more (deletebefore 27 of 40, textversion 34, shipped 38, measured
	// again after the explorer counted reads the shop gives up as failed;
	// the others every scene): 24 scenes miss with a chance below 2e-11.
	entry{dir: "wrong/explore-localcopy", fails: []string{"one-wait", "restart", "explore", "let-go", "conflict-budget", "slow-read", "writer-leaves", "hung-read", "outbox", "come-back"}},
	entry{dir: "wrong/explore-oneversion", fails: []string{"one-wait", "explore", "let-go", "writer-leaves", "db-down", "hung-read", "outbox", "come-back"}, skips: []string{"second-look-lets-go"}},
	entry{dir: "wrong/explore-deadlineread", fails: []string{"one-wait", "explore", "let-go", "conflict-budget", "second-look-lets-go", "slow-read", "writer-leaves", "hung-read", "outbox", "come-back"}},
	// A lease token added to and read back in two steps, drawn by each
	// visitor: two at once draw one token, in a gap only a schedule opens
	// (switches plays it). Its other failures are those of its time: it
	// was written (blind) before the outbox and the faults' checks.
	entry{dir: "wrong/token-add-load", fails: []string{"one-wait", "come-back", "writer-leaves", "outbox", "slow-read", "hung-read", "db-down", "switches"}},
	// Two visitors of one fill who leave together, each looking at how
	// many are left and counting itself out in two steps: only let-go's
	// scene of two leavers in lockstep opens the gap.
	entry{dir: "wrong/leave-check-then-dec", fails: []string{"let-go"}},
	// A read that does not wait for its keepalive: only let-go's renewal
	// held on its way as the read fails lands after the backoff.
	entry{dir: "wrong/renew-not-awaited", fails: []string{"let-go"}},
	// A flight that lands without looking whether it is still on: only
	// one-wait's third visitor, after the abandoned flight ended, sees
	// the live flight gone.
	entry{dir: "wrong/land-no-guard", fails: []string{"one-wait"}},
	// A visitor who comes as the last one leaves, in lockstep at several
	// head starts: a flight's own lock taken in the other order from the
	// instance's (a deadlock), and a visitor counted a step after it
	// found its flight, which the last one ends in between.
	entry{dir: "wrong/flight-lock-order", fails: []string{"let-go"}},
	entry{dir: "wrong/enlist-after-join", fails: []string{"let-go"}},
	// A lease let go by a GET, a comparison and a plain DEL: let-go's
	// letting go whose second command is late, the lease taken over.
	entry{dir: "wrong/letgo-get-then-del", fails: []string{"let-go"}},
	// Visitors refused together are told different moments to come
	// back (issue 25: a jittered Retry-After); retry-after-fixed is the
	// reference before.
	entry{dir: "wrong/retry-after-fixed", fails: []string{"come-back"}},
	// A generator of the whole process with a fixed seed: each visitor's
	// own delay, and every process's the same (come-back is played in two
	// processes, as tokens is).
	entry{dir: "wrong/retry-after-seeded-per-process", fails: []string{"come-back"}},
	entry{dir: "wrong/retry-after-per-flight", fails: []string{"come-back"}},
	entry{dir: "wrong/retry-after-whole-seconds", fails: []string{"come-back"}},
	// Memcache's rate-limited leases, played by compare: right for
	// memcache's clients that accept a stale value, wrong for this case's.
	entry{dir: "wrong/leaserate", fails: []string{"delete-after-commit", "delete-not-set", "stale-set", "invalidate-steps",
		"restart", "let-go", "writer-leaves", "outbox", "slow-read", "db-down", "explore"}},
	// Written blind for come-back and the slow checks, by a helper
	// who had not read the library.
	entry{dir: "wrong/retry-after-seeded-per-instance", fails: []string{"come-back"}},
)
