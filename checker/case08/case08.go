// Package case08 is case 8 of the lab, keys set together expire together:
// its story for `shop run 8` and its checks for `shop check 8`.
//
// The shop talks to Redis through the real go-redis client: an embedded
// miniredis by default, on which time stands still, or a real Redis or
// Valkey server named by REDIS_URL, where Redis's own clock runs and the
// checker reads every time to live with PTTL and corrects for the time
// since the write (see lifetimes). The shop's clock is the checker's, moved
// by hand when the process is at rest (see scene).
package case08

import (
	"context"
	"io"

	"github.com/redis/go-redis/v9"

	"stampede/checker/check"
	"stampede/checker/fleet"
	"stampede/checker/harness"
	"stampede/shop/clock"
	"stampede/shop/events"
)

// checks are the case's checks, each written once, in the order the report
// prints them: what it checks and catches, and the function that decides it.
var checks = []harness.Check[NewShop]{
	{Info: check.Info{ID: "warm-ttl", Name: "every page the warm-up stores lives 30 to 35 s (read from Redis), and serves its readers",
		Catches: "jitter subtracted from the 30 s (pages that live less than the floor), jitter wider than 5 s, a page stored with no time to live"}, Run: WarmTTL},
	{Info: check.Info{ID: "warm-spread", Name: "the warm-up's expiries are spread: no 100 ms holds more pages than a fair draw would put there",
		Catches: "a fixed 30 s, one draw for the whole warm-up, a rand.New with a fixed seed on every call, and jitter in whole seconds (six spikes of about 333 pages)"}, Run: WarmSpread},
	{Info: check.Info{ID: "rebuild-ttl", Name: "pages rebuilt after a cold start live 30 to 35 s and are spread too",
		Catches: "a warm-up that jitters and a rebuild that does not: after a cold start the 2,000 rebuilt pages bring the wave back"}, Run: RebuildTTL},
	{Info: check.Info{ID: "once", Name: "in a cold start each page is queried once, however many readers it has, and later readers are served from Redis; a page slower than the budget too",
		Catches: "a bound on rebuilds with no single-flight in front of it, a flight that does not fill Redis, and a flight forgotten when a reader's budget runs out (forget-on-budget)"}, Run: Once},
	{Info: check.Info{ID: "at-most", Name: "the database never sees more than 20 queries at once",
		Catches: "no bound, a bound per page instead of for the database, a slot taken after the query, a pool larger than the database's"}, Run: AtMost},
	{Info: handoffInfo, Run: Handoff},
	{Info: check.Info{ID: "parallel", Name: "with work for more, the database sees at least 2 queries at once",
		Catches: "one global lock around every rebuild: case 2's mistake again, one query at a time for 2,000 pages"}, Run: Parallel},
	{Info: check.Info{ID: "values", Name: "every reader of a cold start gets its own page",
		Catches: "waiters handed an empty page, and a budget shorter than the rebuild, which turns waiters away while their page is on its way"}, Run: Values},
	{Info: check.Info{ID: "budget", Varies: true, Name: "a reader that waits past its budget gets a typed \"try again\" error, not a hang",
		Catches: "a wait for a database slot with no bound, a singleflight.Do that cannot be left, and a reader that gives up with an untyped error"}, Run: Budget},
	{Info: comeBackInfo, Run: ComeBack},
	{Info: check.Info{ID: "failed-again", Name: "a page whose query failed, or panicked, is queried again by its next reader, who gets its page, and a rebuild whose second look Redis failed keeps no slot",
		Catches: "a failed flight left on the flight table (sticky-failed-flight), so that the page never recovers, a failure remembered in Redis (negative-cache), and a slot not given back when the query fails (slot-leak-on-error) or panics (slot-leak-on-panic), or when Redis fails the second look (second-look-before-defer): more failures than the pool holds leave it empty"}, Run: FailedAgain},
	{Info: check.Info{ID: "slots-after-failure", Name: "after failed queries, the database still never sees more than 20 queries at once",
		Catches: "a failed query that gives its slot back twice (double-release-on-error): each failure widens the pool by one"}, Run: SlotsAfterFailure},
	{Info: check.Info{ID: "starter-leaves", Name: "a reader who hangs up while its rebuild waits for a slot takes no other reader's page with it",
		Catches: "a database slot waited for on the context of the reader who started the rebuild (acquire-on-starter-ctx)"}, Run: fleet.OneAtATime(StarterLeaves)},
	{Info: check.Info{ID: "outage", Name: "while the database fails every query, every reader is answered within its budget, and each page's flight queries once",
		Catches: "a reader that retries a failed page with a fresh budget for each try (retry-resets-budget), and never returns while the outage lasts; and a flight that tries a failed query again at once (retry-no-backoff)"}, Run: fleet.OneAtATime(Outage)},
	{Info: check.Info{ID: "slow-write", Name: "a slow Redis write of one page holds up no other page's rebuild",
		Catches: "a flight table whose mutex is held across the Redis SET (table-lock-across-set): one slow write stops every page"}, Run: fleet.OneAtATime(SlowWrite)},
	{Info: check.Info{ID: "hit-ttl", Name: "hits leave a page's time to live alone: pages read 10 s after the warm-up still expire when they would have",
		Catches: "GETEX or EXPIRE on a hit, to exactly 30 s (getex-sliding-ttl: pages read together expire together again) or to a fresh draw (sliding-jitter: a page read often is never rebuilt)"}, Run: HitTTL},
	{Info: check.Info{ID: "late-reader", Name: "a reader who joins a rebuild just before its first reader gives up waits a budget of its own",
		Catches: "one budget timer for the whole flight, started by its first reader (flight-budget): whoever joins late is told to try again at once"}, Run: fleet.OneAtATime(LateReader)},
	{Info: check.Info{ID: "hung-query", Varies: true, Name: "while the database hangs 21 pages, 20 of them filling the pool, none is still queried 10 s after its reader came, and pages it answers are served",
		Catches: "a rebuild with no deadline (hung-no-deadline: 20 hung queries hold the pool for ever), a deadline on the wait for a connection only (hung-slot-deadline-only), a deadline past 10 s (hung-long-deadline), a flight that stops waiting for a query it leaves running (hung-abandoned-query), a fresh deadline for each retry of the query (hung-retry-fresh-deadline), one deadline for the wait for a connection and another for the query (phase-deadlines: 12 s in all), and a deadline made only once a worker or a slot is free (workers-queue-wait, errgroup-slot-wait)"}, Run: HungQuery},
	{Info: check.Info{ID: "store-refused", Name: "a page the database gave is served even when Redis refuses to store it",
		Catches: "a failed SET turned into every waiter's error, throwing a good page away (store-error-drops-page), and the page returned with the error (store-error-with-page)"}, Run: StoreRefused},
	{Info: redisDownInfo, Run: RedisDown},
	{Info: check.Info{ID: "race", Name: "no data race", Race: true,
		Catches: "a flight table, a slot counter or a page handed from the flight to its waiters without a lock"}, Run: Busy},
	{Info: ExploreInfo, Run: Explore},
	{Info: switchesInfo, Run: Switches},
}

// Case describes case 8.
var Case = check.Case{
	Number:   8,
	Points:   12, // keys set together: jitter by statistics, a bound on rebuilds for the cold start
	Redis:    true,
	Title:    "Keys set together expire together",
	Chapter:  "docs/08-jittered-ttls.md",
	Summary:  "A warm-up stores 2,000 event pages for exactly 30 s, and 30 s later they all expire at once; after a Redis restart, every reader queries.",
	Breaks:   "2,000 pages warmed up together expire together; then Redis restarts empty",
	Lesson:   "a random part in every time to live spreads the expiries of keys written together; a cold start has nothing to spread, and needs one query per key and no more at once than the database's pool",
	Timeline: check.SceneEvents,
	Checks:   harness.Infos(checks),
	Hints: []string{
		"Run `go run ./shop run 8` and read the expiry wave: 2,000 pages stored in the same second with the same 30 s all expire in the same second. What would make pages stored together expire apart?",
		"Give each page its own time to live: 30 s plus a random 0 to 5 s, drawn for every page (math/rand/v2's rand.N(5*time.Second) is safe from many goroutines), in milliseconds, and for the warm-up and the rebuild alike. Beware go-redis's SetEx, which rounds to whole seconds: Set with a Duration sends PX.",
		"Jitter does nothing after Redis restarts empty. Put single-flight in front of the rebuild (one query per page), and bound how many rebuilds run at once to the database's pool, events.Pool (20): a buffered channel of 20 tokens, x/sync/semaphore, errgroup.SetLimit or 20 workers. Take the slot before the query and give it back after.",
		"A reader waits for its page's flight with a budget, on the clock New is given: clock.WithTimeout(ctx, clk, time.Second) and a select on the flight's channel (singleflight's DoChan, not Do, which cannot be left). Past the budget, return a *TryAgain whose delay each reader draws for itself (0.5 to 1.5 s), so that they do not all come back at once.",
		"Compare with solutions/case08/shop.go, and read the chapter on why the pool size is the right bound.",
	},
}

// Shop is what a case 8 implementation offers.
type Shop interface {
	WarmUp(ctx context.Context, ids []int) error
	Page(ctx context.Context, id int) (string, error)
}

// NewShop makes a case 8 shop.
type NewShop func(db *events.DB, rdb *redis.Client, clk clock.Clock) Shop

// Bind binds case 8 to an implementation's constructor.
func Bind[S Shop](newShop func(*events.DB, *redis.Client, clock.Clock) S) harness.Bound {
	mk := func(db *events.DB, rdb *redis.Client, clk clock.Clock) Shop { return newShop(db, rdb, clk) }
	return harness.Bound{
		Scenario: func(ctx context.Context, w io.Writer, args []string) error {
			return Scenario(ctx, w, args, harness.PkgOf[S](), mk)
		},
		Checks: harness.Decide(checks, mk),
	}
}
