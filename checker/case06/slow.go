package case06

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"stampede/checker/check"
	"stampede/checker/fleet"
	"stampede/checker/harness"
	"stampede/checker/shelves"
	"stampede/shop/catalog"
)

// The day the database is slow: a query slower than the lock's time to
// live. A lock is there for a holder that died; a holder that is only slow
// keeps it (renews it while it reads, or takes one long enough), and its
// fill lands.
const (
	// slowestQuery is the slowest query the contract asks a holder to
	// wait for and store, and replyTime how long its answer then takes on
	// its way (the contract allows 10 ms). SlowQuery plays the slowest:
	// a query bounded at exactly slowestQuery gives it up in every run,
	// and one bounded at slowestQuery and the 10 ms keeps it in every run
	// (SlowQuery moves its clock exactly, timer by timer, and nothing else
	// is due at that instant).
	slowestQuery = 5 * time.Second
	replyTime    = 5 * time.Millisecond
	slowQuery    = slowestQuery + replyTime
	// renewFault is when, into the slow query, the first command the
	// holder sends fails: a renewal, in a shop that renews (a long lock
	// sends nothing then, and is struck by nothing).
	renewFault = slowQuery / 4
	// slowQuiet is how long, once every visitor is back and the shelf is
	// filled, the checker watches for commands nobody asked for.
	slowQuiet = 5 * time.Second
	// slowLate is when, in the slow query, a visitor comes to a losing
	// instance: after any lock of up to 4 s would have lapsed, and before
	// the query answers.
	slowLate = 4 * time.Second
)

// SlowQueryInfo is the check that a query slower than the lock fills the
// shelf.
var SlowQueryInfo = check.Info{
	ID:   "slow-query",
	Name: "a query slower than the lock (the contract's slowest: 5 s, its answer 5 ms later; one of the holder's commands meanwhile fails) still fills the shelf, with one query for the whole fleet, and nothing is sent to Redis once it has",
	Catches: "a flight or query whose deadline is the lock's time to live, so that on the day the database is slow " +
		"every holder gives its query up and nothing ever fills (wrong/query-ends-with-lock, the reference before); " +
		"a lock that lapses under a holder that is still reading, so that another instance queries beside it " +
		"(wrong/flight-deadline-past-lock); a renewal with no deadline of its own, one bounded by a whole lock " +
		"life from its sending, and a holder that gives up half a lock life late (wrong/renew-no-timeout, " +
		"wrong/renew-timeout-whole-ttl, wrong/renew-giveup-late); a query bounded at exactly 5 s (wrong/query-deadline-5s); a renewal " +
		"that gives the query up at its first failed command (wrong/renew-stops-on-error); and a renewal that goes " +
		"on after its query (wrong/renew-forever); a renewal that gives the lock more than the contract's 10 s " +
		"(wrong/renew-expire-seconds: EXPIRE given milliseconds, a lock of 2,000 s)",
}

// SlowQuery checks that a holder whose query is slower than the lock still
// fills the shelf. Every query takes slowQuery of the shops' clock; two
// visitors come to each of three instances at once. The fleet must send
// the database one query (shop-1's visitors come first, so that shop-1
// holds the lock), the holder's visitors must get the list it
// returns (the others may be told to try again), and then a visitor on
// every instance must be served with no new query. A visitor who comes to
// a losing instance 4 s in, while the holder still reads, must not query
// either. Last, with every
// visitor back, no instance may send Redis a command for slowQuiet: a
// renewal that outlives its query keeps a lock nobody uses.
func SlowQuery(h *harness.H, newShop NewShop) check.Verdict {
	const shops, each = 3, 2
	f, err := NewFleet(h, fleet.ServerURL(), newShop, shops, slowQuery, nil)
	if err != nil {
		return fleet.Unreachable(err)
	}
	defer f.Close()
	// The verdict rests on a deadline at 5 s and an answer 5 ms later:
	// each must wake at its own time.
	f.Clock.Exact()
	// Shop-1's visitors come first, so that shop-1 holds the lock; the
	// others come at the same instant, once it does.
	crowds := []*harness.Crowd[[]string]{f.Visit(0, each)}
	if err := f.Settle(); err != nil {
		return stuckVerdict(err)
	}
	for i := 1; i < shops; i++ {
		crowds = append(crowds, f.Visit(i, each))
	}
	burst := func() []harness.Outcome[[]string] {
		var outs []harness.Outcome[[]string]
		for _, c := range crowds {
			outs = append(outs, c.Outcomes()...)
		}
		return outs
	}
	// One of the holder's commands fails on its way, once: a live holder
	// rides it out (its lock has time left), and one that gives its query
	// up at the first failed renewal throws a good query away.
	if err := f.Elapse(renewFault); err != nil {
		return stuckVerdict(err)
	}
	until := f.Clock.Now().Add(slowQuery - renewFault - 100*time.Millisecond)
	f.Tap(0).Fail(func(fleet.Command) bool { return f.Clock.Now().Before(until) },
		errors.New("checker: the connection to Redis dropped"), 1)
	if err := f.Elapse(slowLate - renewFault); err != nil {
		return stuckVerdict(err)
	}
	if fleet.AllDone(crowds) && len(keepServed(burst())) == 0 {
		return check.Failed(fmt.Sprintf("%s, nobody served by %v", count(f.Reads(), "read"), slowLate), fmt.Sprintf(
			"every query took %v, and %v in every visitor had been answered, none with the list: the holder gave its "+
				"query up before it could answer. Bound a query by the slowest the contract allows (%v, and 10 ms for "+
				"its answer) or more, not by the lock's time to live; keep the lock meanwhile; and do not give a query "+
				"up at the first renewal that fails (one of shop-1's commands failed %v in): the lock still has time "+
				"left", slowQuery, slowLate, slowestQuery, renewFault))
	}
	// By now a holder that renews has renewed, and a renewal keeps the
	// lock within the contract's 10 s as its first SET did.
	locks, err := presentLocks(f)
	if err != nil {
		return fleet.Unreachable(err)
	}
	for _, k := range locks {
		if k.Forever || k.TTL > maxLockTTL {
			left := "no time to live"
			if !k.Forever {
				left = fmt.Sprintf("%v to live", k.TTL.Round(time.Second))
			}
			return check.Failed(k.Name+" "+left, fmt.Sprintf("every query took %v; %v in, while shop-1 still read, "+
				"its lock %s had %s (at most %v): a renewal gives the lock no more than the time to live it was "+
				"taken with. Mind the unit: PEXPIRE takes milliseconds, EXPIRE seconds", slowQuery, slowLate,
				k.Name, left, maxLockTTL))
		}
	}
	// Shop-2 lost the lock at the start; its visitor now comes while the
	// holder still reads, with a lock that lapsed under it by now had it
	// not been kept.
	lapse := f.Visit(1, 1)
	if err := f.Drive(func() bool { return fleet.AllDone(crowds) && lapse.Done() }, patience); err != nil {
		return waitVerdict(err, "the visitors of a slow query were")
	}
	reads := f.Reads()
	if reads > 1 {
		return check.Failed(count(reads, "read"), fmt.Sprintf("every query took %v, and the fleet sent %d: while shop-1 "+
			"held the lock and read, another instance read too (a visitor came to shop-2 %v in). If its losers wait "+
			"for the fill (see losers-wait), the lock passed on under its live holder: a live holder keeps its lock; "+
			"renew it while the query runs (only while it still holds your token, in one step), or give it a time to "+
			"live longer than the slowest query (%v), within 10 s", slowQuery, reads, slowLate, slowestQuery))
	}
	served := 0
	for _, o := range burst() {
		if o.Panic != "" {
			return check.Failed("", "a visitor's call panicked: "+o.Panic)
		}
		if o.Err == nil {
			served++
		}
	}
	if served == 0 {
		return check.Failed(fmt.Sprintf("%s, nobody served", count(reads, "read")), fmt.Sprintf("every query took %v, "+
			"and no visitor got the list: the holder gave its query up before it answered. Bound a query by the "+
			"slowest the contract allows (%v) or more, not by the lock's time to live, and keep the lock meanwhile",
			slowQuery, slowestQuery))
	}
	if v := shelves.AllGot(keepServed(burst()), catalog.Books(catalog.Bestsellers)); !v.Pass {
		return check.Failed("", v.Message)
	}
	late := []*harness.Crowd[[]string]{}
	for i := range shops {
		late = append(late, f.Visit(i, 1))
	}
	if err := f.Drive(func() bool { return fleet.AllDone(late) }, patience); err != nil {
		return waitVerdict(err, "the visitors after the slow query were")
	}
	if after := f.Reads(); after > reads {
		return check.Failed(count(after, "read"), fmt.Sprintf("the first query (%v) answered, but a visitor after it "+
			"queried again: the list was never stored in Redis", slowQuery))
	}
	for _, c := range late {
		if v := shelves.AllGot(c.Outcomes(), catalog.Books(catalog.Bestsellers)); !v.Pass {
			return check.Failed("", "a visitor after the slow query: "+v.Message)
		}
	}
	figure := fmt.Sprintf("1 query of %v for %d visitors on %d instances; %d served by it", slowQuery, shops*each, shops, served)
	before := make([]int, shops)
	for i := range shops {
		before[i] = len(f.Tap(i).Log())
	}
	if err := f.Elapse(slowQuiet); err != nil {
		return stuckVerdict(err)
	}
	for i := range shops {
		if n := len(f.Tap(i).Log()) - before[i]; n > 0 {
			return check.Failed(figure, fmt.Sprintf("every visitor was back and the shelf filled, and shop-%d still sent "+
				"Redis %s in the next %v: stop renewing the lock when the query returns", i+1, count(n, "command"), slowQuiet))
		}
	}
	stalled := stalledRenewal(h, newShop, true)
	if !stalled.Pass {
		return stalled
	}
	failing := stalledRenewal(h, newShop, false)
	if !failing.Pass {
		return failing
	}
	return check.Passed(figure + "; " + stalled.Figure + "; " + failing.Figure)
}

// stalledRenewal is SlowQuery's second scene (stall) and third: once the
// holder reads, its first command (its renewal, in a shop that renews)
// stalls on its way, held until the context it was sent on ends, as a
// command does in a network's black hole; or, in the third, its every
// command fails at once, as on a connection refused. A lock that is not
// renewed lapses; a visitor who comes to another instance slowLate in,
// after any lock of up to 4 s has lapsed, may take it and read, but only
// once the holder has given its query up: no two queries of the shelf at
// once. It comes as the lock lapses, or, when renewals fail at once, a
// third of a lock life after, a watchdog's next wake. The reference sends
// each renewal on a context that ends when the lock would, and gives up
// when none has landed by then, stalled or failed. It catches a renewal
// sent on the query's own context (c06-renew-no-timeout), and a holder
// that gives up only when a renewal stalls, never on errors.
func stalledRenewal(h *harness.H, newShop NewShop, stall bool) check.Verdict {
	var mu sync.Mutex
	var running []context.Context // the queries' contexts, by start
	var ends []time.Time
	overlap := false
	var f *Fleet
	hook := func(ctx context.Context, _ string) error {
		mu.Lock()
		defer mu.Unlock()
		now := f.Clock.Now()
		for i, q := range running {
			if q.Err() == nil && now.Before(ends[i]) {
				overlap = true
			}
		}
		running = append(running, ctx)
		ends = append(ends, now.Add(slowQuery))
		return nil
	}
	f, err := NewFleet(h, fleet.ServerURL(), newShop, 2, slowQuery, hook)
	if err != nil {
		return fleet.Unreachable(err)
	}
	defer f.Close()
	f.Clock.Exact()
	holder := f.Visit(0, 1)
	if err := f.Settle(); err != nil {
		return stuckVerdict(err)
	}
	if f.Reads() != 1 {
		return check.Skipped(fmt.Sprintf("not staged: shop-1's visitor, alone, made %s where the scene needs it "+
			"reading", count(f.Reads(), "read")))
	}
	// first is the holder's first command from here on: the scene has
	// happened once there is one.
	var first atomic.Pointer[string]
	every := func(c fleet.Command) bool {
		text := c.String()
		first.CompareAndSwap(nil, &text)
		return true
	}
	reached := func() bool { return first.Load() != nil }
	fault, how := "stalled", "its first command meanwhile (%s) stalled on its way, held until the context it was sent on ended"
	when, passed := "as the lock lapsed", "a renewal that stalled"
	if stall {
		defer f.Tap(0).HoldUntilDone(every).Release()
	} else {
		f.Tap(0).Fail(every, ErrConnection, -1)
		fault, how = "failed", "its commands meanwhile (the first: %s) each failed at once ("+ErrConnection.Error()+")"
		when, passed = "a third of a lock life after it lapsed", "renewals that failed"
	}
	start := f.Clock.Now()
	comeAt := slowLate
	if fleet.ServerURL() == "" {
		// The visitor comes as soon as the lock has lapsed, not only at
		// slowLate: a holder that gives its query up a while after its
		// lock would have expired (a renewal bounded by a whole lock
		// life from its sending, or by one and a half) reads beside it.
		// (On a real server Redis's clock is not the scene's to the
		// millisecond: the visitor comes at slowLate.)
		err := f.Drive(reached, slowLate)
		if err != nil && !errors.Is(err, harness.ErrNoBound) {
			return stuckVerdict(err)
		}
		if lapse, ok, err := lockLapse(f); err != nil {
			return fleet.Unreachable(err)
		} else if ok && reached() {
			life := f.Clock.Now().Sub(start) + lapse
			// Renewals that fail at once are not a sign that the lock
			// is gone; a watchdog that gives up at its next wake after
			// the lapse, a third of a lock life at most, is allowed.
			if !stall {
				life += life / 3
			}
			comeAt = min(comeAt, life+time.Millisecond)
		}
	}
	if err := f.Elapse(comeAt - f.Clock.Now().Sub(start)); err != nil {
		return stuckVerdict(err)
	}
	if !reached() {
		return check.Passed("not staged: the holder sent Redis nothing while it read (a lock that outlives the " +
			"query), so no renewal " + fault)
	}
	late := f.Visit(1, 1)
	if err := f.Drive(func() bool { return holder.Done() && late.Done() }, patience); err != nil {
		return waitVerdict(err, "the holder whose renewals "+fault+", and the visitor after it, were")
	}
	mu.Lock()
	twice := overlap
	mu.Unlock()
	if twice {
		return check.Failed("two queries at once", fmt.Sprintf("shop-1 held the lock and read (every query takes %v); "+
			"%s, and the lock lapsed unrenewed. A visitor came to shop-2 %v "+
			"in, %s, took it and read, while shop-1's query still ran: two queries of the shelf at "+
			"once, the stampede the lock is for. Send each renewal on a context that ends when the lock would (its "+
			"last confirmed renewal plus its time to live), and when none has landed by then, whether they stalled "+
			"or failed, give the query up: the lock may be another's by now", slowQuery, fmt.Sprintf(how, *first.Load()),
			comeAt.Round(time.Millisecond), when))
	}
	return check.Passed(fmt.Sprintf("%s, then %s and never two at once",
		passed, count(f.Reads(), "read")))
}

// keepServed keeps the outcomes of the visitors who were served.
func keepServed(outs []harness.Outcome[[]string]) []harness.Outcome[[]string] {
	var kept []harness.Outcome[[]string]
	for _, o := range outs {
		if o.Err == nil && o.Panic == "" {
			kept = append(kept, o)
		}
	}
	return kept
}

// lockLapse returns the time left to live of the longest-lived lock key in
// Redis (see presentLocks), and whether there is one with a time to live.
func lockLapse(f *Fleet) (time.Duration, bool, error) {
	locks, err := presentLocks(f)
	if err != nil {
		return 0, false, err
	}
	var left time.Duration
	found := false
	for _, k := range locks {
		if !k.Forever {
			left, found = max(left, k.TTL), true
		}
	}
	return left, found, nil
}
