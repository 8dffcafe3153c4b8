package library

// Case 11's wrong entries are patches: of the reference, or of the right
// answer generation (messages that name only the book, and a count of
// them per book) for the mistakes of the order of a write's steps, which
// the reference's versions in the messages would forgive.
var _ = register(11,
	entry{dir: "shipped", fails: []string{"invalidate", "write-steps", "crossing", "local-ttl", "one-read", "explore"}, skips: []string{"reconnect"}},
	// The message: none, too early, or read without a memory.
	entry{dir: "wrong/no-publish", fails: []string{"invalidate", "write-steps", "crossing", "explore"}},
	entry{dir: "wrong/publish-before-commit", fails: []string{"write-steps", "explore"}},
	entry{dir: "wrong/publish-before-tombstone", fails: []string{"write-steps"}},
	entry{dir: "wrong/drop-only", fails: []string{"crossing", "explore"}},
	// The subscription's new start.
	entry{dir: "wrong/channel-only", fails: []string{"reconnect", "explore"}},
	entry{dir: "wrong/forget-copies-only", fails: []string{"reconnect"}},
	// The copy's life and cost.
	entry{dir: "wrong/sliding-ttl", fails: []string{"local-ttl"}},
	entry{dir: "wrong/long-ttl", fails: []string{"local-ttl"}},
	entry{dir: "wrong/check-on-hit", fails: []string{"local-hits"}},
	entry{dir: "wrong/no-flight", fails: []string{"one-read"}},
	entry{dir: "wrong/unlocked-hit", fails: []string{"race"}},
	// Right answers written otherwise.
	entry{dir: "right/generation"},
)
