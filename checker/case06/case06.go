// Package case06 is case 6 of the lab, a fleet of shops and the Redis lock:
// its story for `shop run 6` and its checks for `shop check 6`.
//
// The shops talk to Redis through the real go-redis client. By default the
// server is an embedded miniredis, reached over in-memory connections, so
// that every goroutine of the process parks when the fleet is idle and the
// checker can tell a settled fleet from a busy one without a clock; the
// checker moves Redis's clock (FastForward) and the shops' clock by hand.
// With REDIS_URL set, the same scenes run on a real Redis or Valkey server,
// each in a namespace of its own. Redis's time is real there, so the
// checker holds every key the shops write an hour longer than they asked
// and keeps each one's time to live in the scene itself (world.holdStill):
// a key expires when the shops' clock says so, on either server.
package case06

import (
	"context"
	"io"

	"github.com/redis/go-redis/v9"

	"stampede/checker/check"
	"stampede/checker/fleet"
	"stampede/checker/harness"
	"stampede/checker/shelves"
	"stampede/shop/catalog"
	"stampede/shop/clock"
)

// checks are the case's checks, each written once, in the order the report
// prints them: what it checks and catches, and the function that decides it.
var checks = []harness.Check[NewShop]{
	{Info: check.Info{ID: "fleet-once", Name: "a burst on every instance makes one source read for the whole fleet",
		Catches: "in-process single-flight alone (one read per instance), losers that read anyway, and a holder that takes the lock without looking in Redis again"}, Run: FleetOnce},
	{Info: check.Info{ID: "per-instance", Name: "each instance makes at most one lock attempt per burst, not one per visitor",
		Catches: "a lock taken by every visitor instead of by each instance's one flight"}, Run: fleet.OneAtATime(PerInstance)},
	{Info: check.Info{ID: "losers-wait", Name: "instances that lose the lock do not read the source: they wait for the fill",
		Catches: "losers that query anyway, which makes the lock decorative, and losers that give up at once"}, Run: LosersWait},
	{Info: check.Info{ID: "lock-expires", Name: "a holder that dies mid-rebuild blocks the fleet only until its lock expires; then another instance rebuilds",
		Catches: "a lock with no time to live (SETNX, or SET NX without PX)"}, Run: LockExpires},
	{Info: check.Info{ID: "holder-only", Name: "the lock is released only by its holder: a holder whose lock expired leaves the new holder's lock alone",
		Catches: "a release by plain DEL, a compare-then-delete in two commands, and a token shared by every instance"}, Run: HolderOnly},
	{Info: check.Info{ID: "budget", Name: "a loser that waits past its budget gets a typed \"try again\" error, not a hang and not a source read",
		Catches: "a poll with no bound, and a loser that gives up with an untyped error"}, Run: BudgetError},
	{Info: ComeBackInfo, Run: ComeBack},
	{Info: check.Info{ID: "ttl", Name: "every key the fleet writes to Redis has a time to live",
		Catches: "a lock with no expiry, and a key written first and given its expiry in a second command"}, Run: EveryKeyExpires},
	{Info: tokensInfo, Run: Tokens},
	{Info: ExploreInfo, Run: ExploreFleet},
	{Info: switchesInfo, Run: SwitchesFleet},
	{Info: panicInfo, Run: Panics},
	{Info: storeRefusedInfo, Run: fleet.OneAtATime(StoreRefused)},
	{Info: firstLeavesInfo, Run: FirstLeaves},
	{Info: redisDownInfo, Run: fleet.OneAtATime(RedisDown)},
	{Info: coldBoundedInfo, Run: ColdBounded},
	{Info: redisStallsInfo, Run: RedisStalls},
	{Info: failedAgainInfo, Run: FailedAgain},
	{Info: pollFailsInfo, Run: PollFails},
	{Info: failsFastInfo, Run: FailsFast},
	{Info: RenewHolderOnlyInfo, Run: RenewHolderOnly},
	{Info: SlowQueryInfo, Run: SlowQuery},
	{Info: check.Info{ID: "race", Name: "no data race", Race: true,
		Catches: "an instance's in-process cache or flight table read and written without a lock"}, Run: Busy},
}

// Case describes case 6.
var Case = check.Case{
	Number:   6,
	Points:   12, // a lock across a fleet, on Redis: tokens, expiry, safe release
	Redis:    true,
	Title:    "A fleet of shops and the Redis lock",
	Chapter:  "docs/06-fleet-redis-lock.md",
	Summary:  "Six shop instances each coalesce their own visitors, and the database still gets six queries: share a lock in Redis.",
	Breaks:   "six shop servers, one database: the Redis lock across a fleet",
	Lesson:   "single-flight stops at the process; SET NX PX with a random token and an atomic release makes one rebuild for the fleet, and saves work without promising correctness",
	Timeline: check.SceneEvents,
	Checks:   harness.Infos(checks),
	Hints: []string{
		"Count the queries: each instance's single-flight lets one flight per instance through, so six instances make six reads. What do the six flights share that could pick one of them?",
		"Redis is shared by the whole fleet. SET key value NX succeeds for exactly one caller: make that the regeneration lock, taken inside the instance's flight (not by each visitor), with PX so that it expires if its holder dies.",
		"The instances that lose the lock must not query. Let them poll Redis for the holder's fill, every 50 ms or so with some jitter, sleeping on the clock New is given; past a budget (a second), return a *TryAgain whose delay each visitor draws for itself (0.5 to 1.5 s), so that they do not all come back at once.",
		"Releasing is where locks go wrong: your lock may have expired and been taken by another instance while you rebuilt. Store a random token (crypto/rand) as the lock's value and release with a Lua script that deletes the key only if it still holds your token, in one step. And once you hold the lock, look in Redis again before you query; while the query runs (up to 5 s on a bad day), renew the lock with a script that checks the token too, and stop when it returns.",
		"Compare with solutions/case06/shop.go, and read the chapter on why this lock saves work but does not make anything correct.",
	},
}

// Bind binds case 6 to an implementation's constructor.
func Bind[S shelves.Shop](newShop func(*catalog.DB, *redis.Client, clock.Clock) S) harness.Bound {
	mk := func(db *catalog.DB, rdb *redis.Client, clk clock.Clock) shelves.Shop { return newShop(db, rdb, clk) }
	return harness.Bound{
		Scenario: func(ctx context.Context, w io.Writer, args []string) error {
			return Scenario(ctx, w, args, mk, harness.PkgOf[S]())
		},
		Checks: harness.Decide(checks, mk),
	}
}
