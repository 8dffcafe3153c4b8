// Package case09 is case 9 of the lab, serve stale while one rebuilds: its
// story for `shop run 9` and its checks for `shop check 9`.
//
// It plays on case 6's fleet: shop instances sharing one database and one
// Redis (the embedded miniredis, or a real server with REDIS_URL), on a
// clock the checker moves by hand, Redis's time moving with it. Both
// expiries are Redis's: the physical one is the key's, and the logical one
// is read from its time to live. No verdict reads a clock: "nobody waits" is
// judged with the rebuild held at a gate, and the ages of values with the
// checker's own clock moves.
package case09

import (
	"context"
	"io"

	"github.com/redis/go-redis/v9"

	"stampede/checker/case06"
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
	{Info: check.Info{ID: "no-wait", Varies: true, Name: "readers who find a value inside its grace window are served at once, while its rebuild is held",
		Catches: "case 6's lock alone (every loser waits at each expiry), a rebuild run inline by the reader who wins the lock, and no grace window (EX 30)"}, Run: NoWait},
	{Info: check.Info{ID: "one-rebuild", Name: "each expiry makes one source read for the whole fleet, and a fresh value none",
		Catches: "a rebuild started by every reader who sees stale, an in-process single-flight with no lock in Redis, and a logical expiry compared on the wall clock"}, Run: OneRebuild},
	{Info: check.Info{ID: "bounded", Name: "a stale value starts its rebuild, and nothing older than the physical expiry is served",
		Catches: "a stale copy in the instance's memory served when Redis has nothing, and a key that outlives its physical expiry"}, Run: Bounded},
	{Info: check.Info{ID: "delete", Name: "after the write path's delete, no reader on any instance is served the old value",
		Catches: "a grace window kept as a second key that the delete misses, a copy in memory (of what an instance filled, or of what it served: wrong/explore-nearcache), and an invalidation that only marks the value stale"}, Run: AfterDelete},
	{Info: check.Info{ID: "detached", Name: "the rebuild outlives the reader who started it, on the stale path and on a cold miss",
		Catches: "a rebuild run on the request's context, which ends when the reader leaves, and a cold flight run on its first reader's context or under a deadline made and cancelled in that reader's call (wrong/cold-flight-readerctx, wrong/cold-deadline-hoisted)"}, Run: Detached},
	{Info: check.Info{ID: "failed-rebuild", Name: "a failing rebuild leaves the stale value serving until its physical expiry; then a prompt error; then the list once the source is back",
		Catches: "a failed rebuild that deletes the stale value or writes the failure to Redis, and a cold miss that keeps its lock after a failure"}, Run: fleet.OneAtATime(FailedRebuild)},
	{Info: check.Info{ID: "holder-only", Name: "the lock is released only by its holder (case 6's takeover, on a cold miss)",
		Catches: "a release by plain DEL, a compare-then-delete in two commands, and a token shared by every instance"}, Run: func(h *harness.H, mk NewShop) check.Verdict { return case06.HolderOnly(h, mk.lock()) }},
	{Info: check.Info{ID: "budget", Name: "a reader who finds nothing waits within a budget, then gets a typed \"try again\" error",
		Catches: "a poll with no bound on a cold miss"}, Run: func(h *harness.H, mk NewShop) check.Verdict { return case06.BudgetError(h, mk.lock()) }},
	{Info: case06.ComeBackInfo, Run: func(h *harness.H, mk NewShop) check.Verdict { return case06.ComeBack(h, mk.lock()) }},
	{Info: case06.SlowQueryInfo, Run: func(h *harness.H, mk NewShop) check.Verdict { return case06.SlowQuery(h, mk.lock()) }},
	{Info: case06.RenewHolderOnlyInfo, Run: func(h *harness.H, mk NewShop) check.Verdict { return case06.RenewHolderOnly(h, mk.lock()) }},
	{Info: slowRefreshInfo, Run: SlowRefresh},
	{Info: check.Info{ID: "ttl", Name: "every key the fleet writes to Redis has a time to live, and a refresh writes a new physical expiry",
		Catches: "a lock or a value with no expiry, a key given its expiry in a second command, and a refresh that writes with no expiry or keeps the old one (KEEPTTL)"}, Run: func(h *harness.H, mk NewShop) check.Verdict { return EveryKeyExpires(h, mk, mk.lock()) }},
	{Info: check.Info{ID: "retry-after-failure", Name: "after a failed rebuild, or one that landed before its reader's next statement, the next stale reader on its instance starts another",
		Catches: "an in-process \"refresh running\" flag cleared when a rebuild lands and not when it fails (wrong/flag-stuck-after-failure), and one set after the go statement, which the rebuild's own clearing can precede (wrong/flag-after-go); and a count of refreshers lowered in two steps, loaded then stored one less, which a rebuild's own count-out between the two leaves one too high for good (wrong/refreshers-clamp-store); and a flag cleared after the rebuild by a plain statement, which a panicking query skips (wrong/refresh-flag-panic)"}, Run: RetryAfterFailure},
	{Info: check.Info{ID: "shelves-apart", Name: "two shelves stale on one instance are rebuilt apart, while one rebuild is held",
		Catches: "one refresh flag, one refresh flight or one lock for every shelf of an instance (wrong/one-refresh-flag, wrong/racyflag, wrong/explore-oneflight, wrong/explore-onelock)"}, Run: ShelvesApart},
	{Info: check.Info{ID: "delete-keeps-lock", Name: "the write path's delete leaves the rebuild lock to its holder: no second read beside a rebuild whose old list still lands",
		Catches: "an Invalidate that deletes the rebuild lock with the list (wrong/invalidate-drops-lock), and a stale path with no lock in Redis (wrong/everyreader, wrong/perinstance)"}, Run: DeleteKeepsLock},
	{Info: check.Info{ID: "refresh-holder-only", Name: "a refresh releases the lock only if it still holds it (case 6's takeover, on the stale path, by another instance and by the same one)",
		Catches: "a background rebuild that releases the lock with a plain DEL (wrong/refresh-plain-del, wrong/plaindel), with a token every instance shares (wrong/refresh-shared-token), with a GET then a DEL (wrong/refresh-get-then-del), with one token for every lock of an instance (wrong/token-per-instance), or with the token the instance last locked with (wrong/token-in-shop-map)"}, Run: RefreshHolderOnly},
	{Info: check.Info{ID: "second-look", Name: "a rebuild looks at Redis again after it takes the lock: a rebuild landing before its SET NX makes no second read",
		Catches: "a second look made before the lock is taken (wrong/second-look-before-lock), none at all (wrong/no-second-look, wrong/keepttl, wrong/refreshforever), and a lock kept when the second look found the list fresh (wrong/second-look-hit-keeps-lock)"}, Run: SecondLook},
	{Info: check.Info{ID: "refresh-lets-go", Name: "a refresh lets go of the lock when it lands, after its reader has left: a cold reader after a delete reads the source within a lock's time to live",
		Catches: "a refresh that releases its lock on the reader's ended context (wrong/unlock-on-reader-ctx), one that leaves its lock to expire (wrong/refresh-lock-to-ttl), and a rebuild on the reader's context, whose release fails with it (wrong/requestctx)"}, Run: RefreshLetsGo},
	{Info: refreshDeadlineInfo, Run: RefreshDeadline},
	{Info: backoffInfo, Run: Backoff},
	{Info: coldBoundedInfo, Run: func(h *harness.H, mk NewShop) check.Verdict { return ColdBounded(h, mk.lock()) }},
	{Info: storeRefusedInfo, Run: func(h *harness.H, mk NewShop) check.Verdict { return StoreRefused(h, mk.lock()) }},
	{Info: failsFastInfo, Run: func(h *harness.H, mk NewShop) check.Verdict { return FailsFast(h, mk.lock()) }},
	{Info: stalledLockInfo, Run: StalledLock},
	{Info: readOnlyInfo, Run: ReadOnly},
	{Info: rebuildPanicsInfo, Run: RebuildPanics},
	{Info: skewedClockInfo, Run: SkewedClock},
	{Info: ExploreInfo, Run: Explore},
	{Info: switchesInfo, Run: Switches},
	{Info: check.Info{ID: "race", Name: "no data race", Race: true,
		Catches: "state shared by the readers and the background rebuild read and written without a lock"}, Run: Busy},
}

// Case describes case 9.
var Case = check.Case{
	Number:   9,
	Points:   14, // serve stale: two expiries, a rebuild that outlives its visitor, a delete never covered
	Redis:    true,
	Title:    "Serve stale while one rebuilds",
	Chapter:  "docs/09-serve-stale.md",
	Summary:  "Case 6's lock is right, and at every expiry the whole fleet's readers wait for its one rebuild: serve the stale value instead.",
	Breaks:   "the lock is right and every expiry still makes the fleet wait: serve stale while one rebuilds",
	Lesson:   "a logical expiry inside the value and a physical one in Redis: stale readers are served at once while one rebuild runs, nothing older than the physical expiry is served, and a delete is never covered by the grace window",
	Timeline: check.SceneEvents,
	Checks:   harness.Infos(checks),
	Hints: []string{
		"Run `go run ./shop run 9`: the readers wait only at the moments the list expires. At those moments a value 30 s old would do; Redis has just thrown it away.",
		"Keep the list in Redis for 60 s (SET ... EX 60), and call it stale once it is 30 s old, by Redis's clock: its time to live (PTTL, read in the same round trip as the GET, a pipeline) is then 30 s or less. A reader that finds the value stale still has something to serve. Do not write a time into the value: each instance's clock is its own, and they disagree.",
		"The reader that finds a stale value returns it, and, if it wins the lock (case 6's SET NX PX with a token), starts the rebuild in a goroutine on context.WithoutCancel(ctx): the visitor's context ends when it leaves. Losers of the lock serve the stale value too.",
		"Only a missing key makes a reader wait, as in case 6. Invalidate deletes the one key, grace window and all. A failed rebuild writes nothing: the stale value serves until Redis drops it.",
		"Give work that outlives its visitor a deadline on the clock New is given: clock.WithTimeout(context.WithoutCancel(ctx), clk, 6*time.Second), for the background rebuild and for a cold miss's flight, and keep its lock alive meanwhile (renew it every third of its time to live with a script that checks your token, and stop when the query returns), so that a query slower than the lock still lands; bound a cold reader's wait too. A background rebuild that fails keeps its lock until it expires: that is the fleet's backoff from a failing database. Compare with solutions/case09/shop.go.",
	},
}

// Shop is what a case 9 implementation offers: shelves served from the
// fleet's Redis, and the write path's delete.
type Shop interface {
	shelves.Shop
	// Invalidate is called after the database has committed a change to
	// the shelf.
	Invalidate(ctx context.Context, shelf string) error
}

// NewShop makes one instance of a case 9 shop.
type NewShop func(db *catalog.DB, rdb *redis.Client, clk clock.Clock) Shop

// lock is the constructor as case 6's checks of the lock take it.
func (n NewShop) lock() case06.NewShop {
	return func(db *catalog.DB, rdb *redis.Client, clk clock.Clock) shelves.Shop { return n(db, rdb, clk) }
}

// Bind binds case 9 to an implementation's constructor.
func Bind[S Shop](newShop func(*catalog.DB, *redis.Client, clock.Clock) S) harness.Bound {
	mk := func(db *catalog.DB, rdb *redis.Client, clk clock.Clock) Shop { return newShop(db, rdb, clk) }
	return harness.Bound{
		Scenario: func(ctx context.Context, w io.Writer, args []string) error {
			// The story settles its fleet some four hundred times: on a
			// loaded machine one of them can take longer than a check's
			// hang bound, and a story that stops there tells nothing.
			h := harness.New(ctx, harness.PkgOf[S](), storyBound)
			return Scenario(h, w, args, mk)
		},
		Checks: harness.Decide(checks, mk),
	}
}

// storyBound is how long the story waits for its fleet to settle, once,
// before it calls the code stuck.
const storyBound = 4 * harness.DefaultBound
