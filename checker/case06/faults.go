package case06

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"stampede/checker/check"
	"stampede/checker/fleet"
	"stampede/checker/harness"
	"stampede/checker/shelves"
	"stampede/shop/catalog"
	"stampede/shop/clock"
)

// storeRefusedInfo is case 6's check that a list Redis will not store is
// still served.
var storeRefusedInfo = check.Info{
	ID: "store-refused",
	Name: "with nothing in Redis and Redis refusing to store the list, the lock holder's readers still get the list " +
		"the database gave",
	Catches: "a fill that turns a failed write of the list into its readers' error, throwing a good list away " +
		"(wrong/store-error-drops-list, the reference until the lab's issue 25), and one that hands its readers " +
		"the list with the write's error (wrong/store-error-with-list)",
}

// ErrReadOnly is the answer of a Redis that will not store the list: a
// replica, say, that a failover has not yet promoted.
var ErrReadOnly = errors.New("READONLY You can't write against a read only replica. (planned by the checker)")

// StoreRefused checks that a cold fill serves the list it read even when
// Redis refuses to store it. Redis is empty, and every command of shop-1
// that would write the list (one that carries its first title) is answered
// READONLY; the lock and every read go through. Shop-1's three readers
// share its fill and must each get the list. It catches a fill that
// returns the failed write's error, alone or with the list. A shop whose
// writes carry no title the checker can read is not staged: SKIP.
func StoreRefused(h *harness.H, newShop NewShop) check.Verdict {
	f, err := newFleet(h, newShop, 2, holdNone())
	if err != nil {
		return fleet.Unreachable(err)
	}
	defer f.Close()
	title := catalog.Books(catalog.Bestsellers)[0]
	var refused atomic.Int64
	carriesList := func(c fleet.Command) bool {
		if fleet.ReadOnly(c.Name) {
			return false
		}
		for _, a := range c.Args {
			if strings.Contains(a, title) {
				refused.Add(1)
				return true
			}
		}
		return false
	}
	f.Tap(0).Fail(carriesList, ErrReadOnly, -1)
	readers := f.Visit(0, 3)
	if err := f.Drive(readers.Done, patience); err != nil {
		return waitVerdict(err, "shop-1's readers, with nothing in Redis,")
	}
	if refused.Load() == 0 {
		return check.Skipped("not staged: shop-1's readers wrote nothing to Redis that carried the list (an encoding " +
			"the checker cannot read, or no fill at all), so no write of it could be refused")
	}
	if v := shelves.AllGot(readers.Outcomes(), catalog.Books(catalog.Bestsellers)); !v.Pass {
		return check.Failed(v.Figure+" readers got the list", fmt.Sprintf("with nothing in Redis, shop-1's three "+
			"readers shared a fill; the database answered, and Redis refused to store the list (READONLY, as a "+
			"replica does): %s. The list is right: serve it, log that Redis would not keep it, and let the next "+
			"fill store it", v.Message))
	}
	return check.Passed(fmt.Sprintf("3 readers served while Redis refused %d %s", refused.Load(),
		map[bool]string{true: "write", false: "writes"}[refused.Load() == 1]))
}

// firstLeavesInfo is case 6's check that a flight outlives the visitor who
// started it.
var firstLeavesInfo = check.Info{
	ID: "first-leaves",
	Name: "a visitor who leaves while its flight reads the source returns at once; the visitors who joined the " +
		"flight still get the list, and the next instance is served from Redis",
	Catches: "a flight run on its first visitor's context, so that the visitor's leaving cancels the query for " +
		"everyone (wrong/flight-visitor-ctx), or on one that keeps its deadline (wrong/flight-keeps-visitor-deadline); a flight that reads on a detached context but writes the list on " +
		"the visitor's, so that the write fails and the next instance reads again (wrong/flight-writes-visitor-ctx); " +
		"a release on the visitor's context, which leaves the lock for the visitors behind it to wait out " +
		"(wrong/retrylock-release-visitor-ctx); a visitor who waits for the flight after its own context has " +
		"ended (wrong/flight-ignores-leaver); and renewals of the lock sent on the first visitor's context, which " +
		"fail once it has left, so that the holder gives a slow query up (wrong/renew-on-first-visitor-ctx)",
}

// FirstLeaves checks that a flight works for every visitor waiting on it,
// not only for the one who started it. Shop-1's first visitor misses, and
// its flight's query is held; two more visitors of shop-1 join the flight;
// then the first visitor leaves (its context is cancelled, as a server's
// is when its client hangs up). It must return at once. The query then
// returns: the two who stayed must get the list, and a visitor of shop-2
// who comes next must get it within a healthy rebuild, from Redis or from
// a lock nobody holds any more. A shop whose later visitors do not join
// the first one's flight is not staged: SKIP (per-instance judges it).
//
// A third scene lets leftHold pass on the clock after the first visitor
// has left, the query still held, longer than a lock of 2 s lives and
// shorter than the contract's slowest query: a holder that renews its
// lock on the first visitor's context can renew it no more, and gives
// the query up when the lock would expire, though others wait for it
// (c06-renew-on-first-visitor-ctx).
func FirstLeaves(h *harness.H, newShop NewShop) check.Verdict {
	v := firstLeaves(h, newShop, false, 0)
	if !v.Pass {
		return v
	}
	w := firstLeaves(h, newShop, true, 0)
	if !w.Pass || w.Skipped {
		return w
	}
	x := firstLeaves(h, newShop, false, leftHold)
	if !x.Pass || x.Skipped {
		return x
	}
	return check.Passed(v.Figure + fmt.Sprintf("; the same when the first visitor's deadline passed %v into its "+
		"flight, and when the query took %v more after the first visitor left", shortDeadline, leftHold))
}

// leftHold is how long the query of FirstLeaves's third scene is held on
// the shops' clock after its first visitor has left: past a 2 s lock,
// within the contract's slowest query (5 s).
const leftHold = 3 * time.Second

// shortDeadline is how long the first visitor of firstLeaves's deadline
// scene has before its deadline: less than the query takes.
const shortDeadline = 100 * time.Millisecond

// firstLeaves is one scene of FirstLeaves: the first visitor's context is
// cancelled, or, with deadline, its deadline is shortDeadline away on the
// shops' clock (harness.DeadlineAt), and it ends when the clock has gone
// past it and the visitor leaves. The second catches a flight that drops the visitor's cancel but
// keeps its deadline (c06-flight-keeps-visitor-deadline): a request with
// little time left takes the flight, and everyone who joined it, down
// with it.
func firstLeaves(h *harness.H, newShop NewShop, deadline bool, hold time.Duration) check.Verdict {
	g, held := holdNth(1)
	f, err := newFleet(h, newShop, 2, g)
	if err != nil {
		return fleet.Unreachable(err)
	}
	defer f.Close()
	gone, leave := context.WithCancel(context.Background())
	defer leave()
	first := f.VisitWith(1, func(ctx context.Context, _ int) ([]string, error) {
		if deadline {
			ctx, end := harness.DeadlineAt(ctx, f.Clock.Now().Add(shortDeadline))
			defer context.AfterFunc(gone, end)()
			return f.shops[0].Top(ctx, catalog.Bestsellers)
		}
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		defer context.AfterFunc(gone, cancel)()
		return f.shops[0].Top(ctx, catalog.Bestsellers)
	})
	if err := f.Settle(); err != nil {
		return stuckVerdict(err)
	}
	if f.Reads() == 0 {
		return check.Failed("", "shop-1's visitor, with nothing in Redis, never read the source: "+
			strings.Join(f.Places(), "; "))
	}
	stayed := f.Visit(0, 2)
	if err := f.Settle(); err != nil {
		return stuckVerdict(err)
	}
	if f.Reads() > 1 {
		return check.Skipped("not staged: shop-1's later visitors read the source themselves instead of joining the " +
			"first one's flight, so there was no flight to outlive its first visitor (per-instance judges that)")
	}
	if deadline {
		// The first visitor's deadline comes while its flight reads; it
		// leaves then.
		if err := f.Elapse(shortDeadline); err != nil {
			return stuckVerdict(err)
		}
	}
	leave()
	if err := f.Settle(); err != nil {
		return stuckVerdict(err)
	}
	if !first.Done() {
		return check.Failed("the visitor who left still waiting", "shop-1's first visitor left (its context was "+
			"cancelled) while its flight read the source, and it was still waiting for the flight: "+
			strings.Join(f.Places(), "; ")+". A visitor waits for a flight and for its own context, whichever ends "+
			"first (a select on the flight's channel and ctx.Done()): a server's handler whose client hung up must "+
			"not stay")
	}
	if hold > 0 {
		// The query goes on for hold after its first visitor has gone.
		if err := f.Elapse(hold); err != nil {
			return stuckVerdict(err)
		}
	}
	held[0].Open()
	if err := f.Drive(stayed.Done, patience); err != nil {
		return waitVerdict(err, "shop-1's two visitors who stayed, after the first one left,")
	}
	outs := stayed.Outcomes()
	if hold > 0 {
		// Waiting that long, a visitor may be past its budget: a
		// TryAgain is its answer, and the list in Redis (below) tells
		// whether the flight went on.
		outs = slices.DeleteFunc(outs, func(o harness.Outcome[[]string]) bool {
			var later fleet.Afterer
			return errors.As(o.Err, &later)
		})
	}
	if v := shelves.AllGot(outs, catalog.Books(catalog.Bestsellers)); !v.Pass {
		how := "left"
		if deadline {
			how = fmt.Sprintf("came with %v left before its deadline, which passed, and left", shortDeadline)
		}
		if hold > 0 {
			how = fmt.Sprintf("left, and the query went on %v more (within the contract's 5 s)", hold)
		}
		return check.Failed(v.Figure+" who stayed got the list", fmt.Sprintf("shop-1's first visitor %s while its "+
			"flight read the source; the two who had joined the flight stayed, and yet %s. A flight works for every "+
			"visitor waiting on it: run it on a context its first visitor's leaving, or its deadline, does not end "+
			"(context.WithoutCancel), with a deadline of its own, and keep its lock alive on that context too (a "+
			"renewal sent on the first visitor's context fails once it has left)", how, v.Message))
	}
	ctx := h.Context()
	keys, err := f.World.Keys(ctx)
	if err != nil {
		return fleet.Unreachable(err)
	}
	held2 := strings.Join(names(keys), ", ")
	if held2 == "" {
		held2 = "nothing"
	}
	before := f.Reads()
	next := f.Visit(1, 1)
	err = f.Drive(next.Done, rebuild)
	if errors.Is(err, fleet.ErrNoBound) {
		return check.Failed(fmt.Sprintf("shop-2 waiting after %v", rebuild), fmt.Sprintf("shop-1's first visitor "+
			"left while its flight read the source; the two who stayed got the list, and then shop-2's visitor was "+
			"still waiting after %v of the shops' clock. Redis held, when it came: %s. The flight stored no list, or "+
			"left its lock, for the fleet to wait out: the flight's Redis commands (the write of the list, the "+
			"release of the lock) must run on the flight's own context, not on the visitor's, which is cancelled "+
			"when it leaves", rebuild, held2))
	}
	if err != nil {
		return stuckVerdict(err)
	}
	if v := shelves.AllGot(next.Outcomes(), catalog.Books(catalog.Bestsellers)); !v.Pass {
		return check.Failed("shop-2's visitor not served", fmt.Sprintf("after shop-1's flight had served the two "+
			"visitors who stayed, shop-2's visitor who came next was not served: %s. Redis held, when it came: %s",
			v.Message, held2))
	}
	if reads := f.Reads(); reads > before {
		if hold > 0 {
			return check.Failed("shop-2 read the source again", fmt.Sprintf("shop-1's first visitor left while its "+
				"flight read the source, and the query went on %v more (within the contract's 5 s); the two who "+
				"stayed were answered, but Redis never got the list (it held, when shop-2's visitor came: %s), and "+
				"shop-2 read the source again: the flight gave its query up, or never stored what it read. Keep the "+
				"lock alive, and store the list, on the flight's own context: a renewal sent on the first visitor's "+
				"context fails once it has left, and the holder gives up when its lock would expire", hold, held2))
		}
		return check.Failed("shop-2 read the source again", fmt.Sprintf("shop-1's first visitor left while its flight "+
			"read the source; the two who stayed got the list, but Redis did not (it held, when shop-2's visitor "+
			"came: %s), and shop-2 read the source again. A flight's write of the list is for the whole fleet: run "+
			"it on the flight's own context, not on the visitor's, which is cancelled when it leaves", held2))
	}
	return check.Passed("the visitor who left returned at once; 2 of 2 who stayed got the list, and shop-2's " +
		"next visitor too")
}

// redisDownInfo is case 6's check that a Redis that is down does not let
// the fleet's visitors stampede the source.
var redisDownInfo = check.Info{
	ID: "redis-down",
	Name: "with Redis refusing every command, each instance reads the source at most once for a burst of its " +
		"visitors: they get the list or an error, and the database no stampede",
	Catches: "a flight that returns Redis's error and a visitor who then falls back to the database itself " +
		"(wrong/fallback-per-visitor), " +
		"and one who goes to the database on its own once Redis fails to answer, outside the flight " +
		"(wrong/fallback-outside-flight): with Redis down, the single-flight of cases 1 to 5 is what stands " +
		"between the visitors and the database",
}

// RedisDown checks that with Redis down the fleet does not stampede the
// source. Every command of every instance fails as a dropped connection
// fails; 25 visitors come to each of two instances at once. Each instance
// may read the source once (falling back, in its flight, to the database,
// as the reference does) or not at all (answering with an error); every
// visitor must get the list or an error. It catches a fallback to the
// database outside the flight.
func RedisDown(h *harness.H, newShop NewShop) check.Verdict {
	const instances, each = 2, 25
	f, err := newFleet(h, newShop, instances, holdNone())
	if err != nil {
		return fleet.Unreachable(err)
	}
	defer f.Close()
	var refused atomic.Int64
	every := func(fleet.Command) bool { refused.Add(1); return true }
	for i := range instances {
		f.Tap(i).Fail(every, ErrConnection, -1)
	}
	burst := f.Burst(each)
	if err := f.Drive(burst.Done, patience); err != nil {
		return waitVerdict(err, "the visitors, with Redis down,")
	}
	reads := f.Reads()
	figure := fmt.Sprintf("%s for %d visitors", count(reads, "source read"), instances*each)
	if refused.Load() == 0 {
		return check.Skipped("not staged: the fleet sent Redis no command, so none could fail")
	}
	if reads > instances {
		return check.Failed(figure, fmt.Sprintf("with Redis refusing every command (%v), %d visitors came to each "+
			"of %d instances at once, and the database got %d reads. Falling back to the database when Redis is down "+
			"can be right, but inside the instance's one flight: there it costs one read per instance, and outside "+
			"it one per visitor, the stampede itself, at the moment the cache is gone",
			ErrConnection, each, instances, reads))
	}
	served, failed := 0, 0
	for i, o := range burst.Outcomes() {
		switch {
		case o.Panic != "":
			return check.Failed(figure, fmt.Sprintf("with Redis down, visitor %d's call panicked: %s", i+1, o.Panic))
		case o.Err != nil:
			failed++
		case !slices.Equal(o.Value, catalog.Books(catalog.Bestsellers)):
			return check.Failed(figure, fmt.Sprintf("with Redis down, visitor %d got %q, not the database's list "+
				"and no error", i+1, o.Value))
		default:
			served++
		}
	}
	return check.Passed(fmt.Sprintf("%s: %d served, %d told of the error", figure, served, failed))
}

// ErrConnection is the error of a Redis command whose connection dropped.
var ErrConnection = errors.New("read tcp 127.0.0.1:6379: i/o timeout (planned by the checker)")

// redisStallsInfo is case 6's check that a visitor's deadline bounds its
// wait for Redis.
var redisStallsInfo = check.Info{
	ID: "redis-stalls",
	Name: "a visitor whose read of Redis stalls on its way returns by its own deadline, with the list or its " +
		"context's error",
	Catches: "a read of Redis on a context the visitor's deadline does not end (context.WithoutCancel before the " +
		"flight, \"so that a half-read is not cancelled\"), so that a visitor with 100 ms to live waits out Redis's " +
		"stall (wrong/fastpath-detached)",
}

// RedisStalls checks that a visitor's read of Redis runs on a context its
// deadline ends, or that the visitor does not wait for it past that
// deadline. The shelf is in Redis (shop-2 filled it); every command shop-1
// sends is held on its way until the context it was sent on ends, as a
// slow network holds it for a client that honours deadlines. A visitor of
// shop-1 whose deadline is 100 ms away must return by then. It catches a
// read of Redis on a detached context, and a wait for a flight that does
// not look at the visitor's own context.
func RedisStalls(h *harness.H, newShop NewShop) check.Verdict {
	f, err := newFleet(h, newShop, 2, holdNone())
	if err != nil {
		return fleet.Unreachable(err)
	}
	defer f.Close()
	filler := f.Visit(1, 1)
	if err := f.Drive(filler.Done, patience); err != nil {
		return waitVerdict(err, "shop-2's visitor, with nothing in Redis,")
	}
	if v := shelves.AllGot(filler.Outcomes(), catalog.Books(catalog.Bestsellers)); !v.Pass {
		return check.Failed("", "shop-2's visitor, with nothing in Redis, was not served: "+v.Message)
	}
	held := f.Tap(0).HoldUntilDone(func(fleet.Command) bool { return true })
	hurried := f.VisitWith(1, func(ctx context.Context, _ int) ([]string, error) {
		ctx, cancel := clock.WithTimeout(ctx, f.Clock, Hurry)
		defer cancel()
		return f.shops[0].Top(ctx, catalog.Bestsellers)
	})
	start := f.Clock.Now()
	err = f.Drive(hurried.Done, Hurry)
	late := errors.Is(err, fleet.ErrNoBound) || NoTimer(err)
	switch {
	case late && !held.Reached():
		return check.Failed(fmt.Sprintf("waiting past its deadline of %v", Hurry), fmt.Sprintf("the shelf was in "+
			"Redis, and a visitor of shop-1 whose deadline was %v away was still waiting after it, with nothing "+
			"held: %s", Hurry, strings.Join(f.Places(), "; ")))
	case late:
		return check.Failed(fmt.Sprintf("waiting past its deadline of %v", Hurry), fmt.Sprintf("the shelf was in "+
			"Redis, and a visitor of shop-1 whose deadline was %v away came; its command to Redis (%s) stalled on its "+
			"way, and the visitor was still waiting after its deadline had passed. Read Redis on the visitor's own "+
			"context, or on the flight's, and wait for the flight and for the visitor's context, whichever ends "+
			"first: a context with no end (context.WithoutCancel) holds the visitor for as long as Redis stalls",
			Hurry, held.Held()))
	case err != nil:
		return stuckVerdict(err)
	case !held.Reached():
		return check.Skipped("not staged: shop-1's visitor sent Redis nothing before it returned, so there was " +
			"nothing to stall")
	}
	o := hurried.Outcomes()[0]
	switch {
	case o.Panic != "":
		return check.Failed("", "the visitor's call panicked: "+o.Panic)
	case o.Err == nil && !slices.Equal(o.Value, catalog.Books(catalog.Bestsellers)):
		return check.Failed("", fmt.Sprintf("the visitor whose read of Redis stalled got %q, not the list", o.Value))
	}
	got := "the list"
	if o.Err != nil {
		got = "its context's error"
	}
	return check.Passed(fmt.Sprintf("%s after %v, with its read of Redis stalled", got, f.Clock.Now().Sub(start)))
}

// failedAgainInfo is case 6's check that a failed query leaves nothing
// behind that a later visitor is served.
var failedAgainInfo = check.Info{
	ID: "failed-again",
	Name: "a query that fails is not cached: once the database answers again, the next visitor on another " +
		"instance gets the list",
	Catches: "a fill that writes to Redis whatever the query returned, so that after a failed query an empty shelf " +
		"(\"null\") is served to the whole fleet with no error for the shelf's time to live (wrong/fill-on-error), " +
		"and a failure remembered for longer than the longest lock; and a lock kept when Redis, not the database, " +
		"failed the holder's second look (wrong/second-look-error-keeps-lock)",
}

// FailedAgain checks that a failed query leaves no answer behind. The
// fleet's first query fails; shop-1's visitor must get an error (or the
// list, from a retry). Then the database answers again, the longest lock
// the checker accepts has had time to expire, and a visitor of shop-2
// must get the list. It catches a failed query's empty result stored in
// Redis, and a failure kept there for longer than any lock.
func FailedAgain(h *harness.H, newShop NewShop) check.Verdict {
	var queries atomic.Int64
	down := func(context.Context, string) error {
		if queries.Add(1) == 1 {
			return errDatabaseDown
		}
		return nil
	}
	f, err := NewFleet(h, fleet.ServerURL(), newShop, 2, 0, down)
	if err != nil {
		return fleet.Unreachable(err)
	}
	defer f.Close()
	books := catalog.Books(catalog.Bestsellers)
	first := f.Visit(0, 1)
	if err := f.Drive(first.Done, patience); err != nil {
		return waitVerdict(err, "shop-1's visitor, whose query failed,")
	}
	switch o := first.Outcomes()[0]; {
	case o.Panic != "":
		return check.Failed("", "shop-1's visitor's call panicked: "+o.Panic)
	case o.Err == nil && !slices.Equal(o.Value, books):
		return check.Failed(fmt.Sprintf("served %q", o.Value), fmt.Sprintf("the fleet's first query failed (%v), "+
			"and shop-1's visitor got %q with no error: a failed query has no list to give; return its error",
			errDatabaseDown, o.Value))
	}
	held := "nothing"
	if keys, err := f.World.Keys(h.Context()); err == nil && len(keys) > 0 {
		held = strings.Join(names(keys), ", ")
	}
	if err := f.Elapse(maxLockTTL + 10*time.Millisecond); err != nil {
		return stuckVerdict(err)
	}
	next := f.Visit(1, 1)
	if err := f.Drive(next.Done, patience); err != nil {
		return waitVerdict(err, "shop-2's visitor, with the database back,")
	}
	if v := shelves.AllGot(next.Outcomes(), books); !v.Pass {
		return check.Failed("shop-2's visitor not served", fmt.Sprintf("the fleet's first query failed (%v); %v "+
			"later, with the database answering again, shop-2's visitor was not served the list: %s. Redis held, "+
			"after the failure: %s. Store only a list the database gave: a failed query's empty result, cached, is "+
			"served to the whole fleet as an empty shelf for its time to live", errDatabaseDown,
			maxLockTTL+10*time.Millisecond, v.Message, held))
	}
	figure := fmt.Sprintf("after the failed query, shop-2's visitor got the list (%s)", count(f.Reads(), "source read"))
	v, staged := secondLookFails(h, newShop)
	if !v.Pass {
		return v
	}
	if staged {
		figure += "; " + v.Figure
	}
	return check.Passed(figure)
}

// secondLookFails is FailedAgain's second scene: shop-1's visitor takes
// the lock, and its next read of Redis, the second look, fails as on a
// dropped connection. Shop-1's visitor may get the error; then shop-2's
// visitor must be served within a healthy rebuild. Redis failed, not the
// database: the holder has no reason to keep the lock as a backoff. It
// catches a lock released only on the paths that read something
// (c06-second-look-error-keeps-lock): one Redis blip after the lock blocks
// the shelf for the whole fleet for the lock's time to live. staged is
// false when shop-1 sent no read of Redis after its lock attempt.
func secondLookFails(h *harness.H, newShop NewShop) (v check.Verdict, staged bool) {
	f, err := NewFleet(h, fleet.ServerURL(), newShop, 2, 0, nil)
	if err != nil {
		return fleet.Unreachable(err), false
	}
	defer f.Close()
	var locked, struck atomic.Bool
	f.Tap(0).Fail(func(c fleet.Command) bool {
		if c.Conditional() {
			locked.Store(true)
			return false
		}
		if locked.Load() && fleet.ReadOnly(c.Name) && len(c.Keys) > 0 {
			struck.Store(true)
			return true
		}
		return false
	}, ErrConnection, 1)
	first := f.Visit(0, 1)
	if err := f.Drive(first.Done, patience); err != nil {
		return waitVerdict(err, "shop-1's visitor, whose second look at Redis failed,"), true
	}
	if !struck.Load() {
		return check.Passed(""), false
	}
	if p := first.Panicked(); p != "" {
		return check.Failed("", "shop-1's visitor's call panicked: "+p), true
	}
	next := f.Visit(1, 1)
	err = f.Drive(next.Done, rebuild)
	if errors.Is(err, fleet.ErrNoBound) {
		held := "nothing"
		if keys, err := f.World.Keys(h.Context()); err == nil && len(keys) > 0 {
			held = strings.Join(names(keys), ", ")
		}
		return check.Failed(fmt.Sprintf("shop-2 waiting after %v", rebuild), fmt.Sprintf("shop-1's visitor took the "+
			"lock, and its next read of Redis (the second look) failed as on a dropped connection. Shop-2's visitor "+
			"came next and was still waiting after %v of the shops' clock; Redis held: %s. The holder kept the lock "+
			"though the database never failed: a Redis blip is no news about the database, and the lock kept as a "+
			"backoff blocks the shelf for the whole fleet for its time to live. Keep the lock only when the query "+
			"failed; let it go on every other way out (a defer)", rebuild, held)), true
	}
	if err != nil {
		return stuckVerdict(err), true
	}
	if v := shelves.AllGot(next.Outcomes(), catalog.Books(catalog.Bestsellers)); !v.Pass {
		return check.Failed("shop-2's visitor not served", fmt.Sprintf("shop-1's visitor took the lock, and its "+
			"second look at Redis failed; then shop-2's visitor was not served the list: %s", v.Message)), true
	}
	return check.Passed("a holder whose second look failed left the lock: shop-2 was served at once"), true
}

// errDatabaseDown is the error of FailedAgain's failed query.
var errDatabaseDown = errors.New("the database is down (planned by the checker)")

// pollFailsInfo is case 6's check that a loser whose polls fail does not
// hammer Redis.
var pollFailsInfo = check.Info{
	ID: "poll-fails",
	Name: "a loser whose commands to Redis fail gives up or waits between them: at most one command per 10 ms of " +
		"its wait, and an answer within its budget",
	Catches: "a poll that meets an error and asks again at once, with no pause, \"so as not to lose a poll " +
		"interval\": a hot loop against a failing Redis, thousands of commands a second from every waiting " +
		"visitor (wrong/poll-error-hotloop)",
}

// PollFails checks that a loser of the lock does not turn a failing Redis
// into a hot loop. Shop-1 takes the lock and its query is held; shop-2's
// visitor misses, loses the lock, and from then on every command it sends
// (its polls, and any further lock attempt) fails as on a dropped
// connection. It must return within the checker's
// longest budget, with an error, having sent at most one command per
// 10 ms of the shops' clock it waited (and a few to spare). A loser that
// sends nothing after its lock attempt is not staged: SKIP.
func PollFails(h *harness.H, newShop NewShop) check.Verdict {
	f, gate, v := lockHeld(h, newShop)
	if f == nil {
		return v
	}
	defer f.Close()
	var lost atomic.Bool
	var refused atomic.Int64
	f.Tap(1).Fail(func(c fleet.Command) bool {
		if c.Conditional() && !lost.Load() {
			lost.Store(true)
			return false
		}
		if lost.Load() {
			refused.Add(1)
			return true
		}
		return false
	}, ErrConnection, -1)
	start := f.Clock.Now()
	loser := f.Visit(1, 1)
	err := f.Drive(loser.Done, maxBudget)
	waited := f.Clock.Now().Sub(start)
	most := int64(waited/(10*time.Millisecond)) + 5
	if n := refused.Load(); n > most {
		return check.Failed(fmt.Sprintf("%d failed polls in %v", n, waited.Round(time.Millisecond)), fmt.Sprintf(
			"shop-1 held the lock; shop-2's visitor lost it, and every command it sent from then on failed (%v). It sent "+
				"%d of them in %v of the shops' clock, more than one per 10 ms: a poll that meets an error must "+
				"give up (return the error) or wait before it asks again, on the clock New is given; asking again at "+
				"once is a hot loop against a Redis that is already in trouble", ErrConnection, n,
			waited.Round(time.Millisecond)))
	}
	if err != nil {
		if errors.Is(err, fleet.ErrNoBound) {
			return check.Failed(fmt.Sprintf("waiting after %v", maxBudget), fmt.Sprintf("shop-1 held the lock, and "+
				"shop-2's visitor, whose polls of Redis all failed, was still waiting after %v of the shops' clock: "+
				"its budget holds when Redis fails too", maxBudget))
		}
		return stuckVerdict(err)
	}
	gate.Open()
	if refused.Load() == 0 {
		return check.Skipped("not staged: shop-2's visitor sent Redis nothing after its lock attempt, so nothing " +
			"could fail")
	}
	o := loser.Outcomes()[0]
	switch {
	case o.Panic != "":
		return check.Failed("", "shop-2's visitor's call panicked: "+o.Panic)
	case o.Err == nil && !slices.Equal(o.Value, catalog.Books(catalog.Bestsellers)):
		return check.Failed("", fmt.Sprintf("shop-2's visitor, whose polls of Redis failed, got %q with no error", o.Value))
	}
	return check.Passed(fmt.Sprintf("%s failed, and the visitor was answered after %v",
		count(int(refused.Load()), "command"), waited.Round(time.Millisecond)))
}
