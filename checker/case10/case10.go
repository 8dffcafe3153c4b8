// Package case10 is case 10 of the lab, the stale set: its story for
// `shop run 10` and its checks for `shop check 10`.
//
// The shops talk to Redis through the real go-redis client, on an embedded
// miniredis by default or on a real server with REDIS_URL, as in case 6
// (world.go, tap.go and clock.go are case 6's, with the time of each
// command noted for the story). The database is the catalog's price
// table: a row per book with a version, read by a query the checker can
// hold after the row is read, and written in a transaction the checker can
// hold just before its commit. With those two gates and a hold on any one
// Redis command, each check forces one interleaving of a read and a write,
// and then asks a visitor on a fresh instance what the price is.
package case10

import (
	"context"
	"io"

	"github.com/redis/go-redis/v9"

	"stampede/checker/check"
	"stampede/checker/fleet"
	"stampede/checker/harness"
	"stampede/shop/catalog"
	"stampede/shop/clock"
)

// checks are the case's checks, each written once, in the order the report
// prints them: what it checks and catches, and the function that decides it.
var checks = []harness.Check[NewShop]{
	{Info: check.Info{ID: "delete-after-commit", Name: "a read while a write is still uncommitted does not leave the old price in Redis",
		Catches: "a delete before the commit: a read between the delete and the commit stores the old row with a fresh time to live"}, Run: DeleteAfterCommit},
	{Info: check.Info{ID: "delete-not-set", Name: "two writes whose cache updates cross leave the last committed price, not the older one",
		Catches: "a write path that sets the new price in Redis instead of deleting it: the last SET wins, and it may carry the older price"}, Run: DeleteNotSet},
	{Info: check.Info{ID: "stale-set", Name: "a read that read the row before a write's commit cannot store it after the write's delete",
		Catches: "the stale set: a plain SET after a delete after commit, a delete that leaves the lease, a lease checked with GET and then SET, a version compared as text, and a delayed second delete"}, Run: StaleSet},
	{Info: stepsInfo, Run: InvalidateSteps},
	{Info: check.Info{ID: "slow-leader", Name: "a filler whose lease expired while another took over is refused (CONFLICT), and what it read is not stored",
		Catches: "a lease token that is the same for every filler, and a fill that checks only that some lease exists"}, Run: SlowLeader},
	{Info: check.Info{ID: "lease-coalesces", Name: "while one filler holds the lease nobody else reads the row; the others wait for its fill, within a bound",
		Catches: "a cache with no lease (every miss reads the row), losers that read anyway, and a wait with no bound"}, Run: fleet.OneAtATime(LeaseCoalesces)},
	{Info: oneWaitInfo, Run: OneWait},
	{Info: comeBackInfo, Run: fleet.OneAtATime(ComeBack)},
	{Info: check.Info{ID: "ttl", Name: "every key has a time to live: a crash between commit and delete serves the old price for at most a minute",
		Catches: "a price or a lease stored with no time to live, or given one by a second command, and a price that lives longer than a minute"}, Run: EveryKeyExpires},
	{Info: tokensInfo, Run: Tokens},
	{Info: restartInfo, Run: Restart},
	{Info: letGoInfo, Run: LetGo},
	{Info: conflictBudgetInfo, Run: ConflictBudget},
	{Info: writerLeavesInfo, Run: WriterLeaves},
	{Info: outboxInfo, Run: Outbox},
	{Info: slowReadInfo, Run: SlowRead},
	{Info: hungReadInfo, Run: HungRead},
	{Info: dbDownInfo, Run: DatabaseDown},
	{Info: secondLookInfo, Run: SecondLookLetsGo},
	{Info: oneSlotInfo, Run: OneSlot},
	{Info: ExploreInfo, Run: Explore},
	{Info: switchesInfo, Run: Switches},
	{Info: check.Info{ID: "race", Name: "no data race", Race: true,
		Catches: "an instance's own state (a counter, a map of leases) read and written without a lock"}, Run: Busy},
}

// Case describes case 10.
var Case = check.Case{
	Number:   10,
	Points:   16, // the stale set: delete after commit, leases, the stale leader's conflict
	Redis:    true,
	Title:    "The stale set",
	Chapter:  "docs/10-stale-set.md",
	Summary:  "A price change leaves the old price in Redis for a whole time to live: delete after the commit, and let a lease refuse the slow read's fill.",
	Breaks:   "a price change, and the old price stays in Redis for 30 s: delete after commit, and leases",
	Lesson:   "a write deletes after its commit and never sets; a lease in Redis, ended by that delete, refuses the slow read's fill and stops the stampede too",
	Timeline: check.SceneEvents,
	Checks:   harness.Infos(checks),
	Hints: []string{
		"Write the races down with times: a read misses at .000 and its query returns the row as it was at .000; a write commits at .003. What does each of them send to Redis, and in which order can those commands land?",
		"Move the delete after the commit, and make it a delete, never a SET of the new price: a SET carries a value, and a slower SET of an older value can land after it. What is still wrong? A read that read before the commit and stores after the delete.",
		"Give every miss a lease: SET lease:{<book>} <random token> NX PX 2000. Only the winner reads the row; the others poll Redis (about every 50 ms with some jitter, on the clock New is given) and give up after a second with a *TryAgain whose delay each visitor draws for itself (0.5 to 1.5 s). Poll once per instance, not once per visitor: put a flight in front, as in cases 1 to 6, whose context ends when its last visitor leaves.",
		"The fill stores the price only if the lease still holds its token, and the check and the SET are one step: a Lua script (redis.NewScript). The write path's delete removes the price and the lease in one DEL, so a fill that read before the commit is refused; return a typed ErrConflict for it, and read again.",
		"A lease's time to live is for a filler that died, not for one that is slow: while the holder reads, renew its lease every third of its time to live with a script that renews only while it still holds your token, stop renewing when the read returns, and give the read a deadline of its own (10 s: the contract asks a fill to wait out reads of 5 s).",
		"Name the price price:{<book>} and its lease lease:{<book>}: the part in braces, the hash tag, puts both in one hash slot, so that Redis Cluster runs a script or a DEL that names both (it refuses keys of two slots with CROSSSLOT).",
		"Compare with solutions/case10/shop.go, and read the chapter's table: which techniques stop the stampede, and which stop the stale set.",
	},
}

// Bind binds case 10 to an implementation's constructor.
func Bind[S Shop](newShop func(*catalog.DB, *redis.Client, clock.Clock) S) harness.Bound {
	mk := func(db *catalog.DB, rdb *redis.Client, clk clock.Clock) Shop { return newShop(db, rdb, clk) }
	return harness.Bound{
		Scenario: func(ctx context.Context, w io.Writer, args []string) error {
			return Scenario(ctx, w, args, mk, harness.PkgOf[S]())
		},
		Checks: harness.Decide(checks, mk),
	}
}
