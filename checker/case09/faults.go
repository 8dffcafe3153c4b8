package case09

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"stampede/checker/case06"
	"stampede/checker/check"
	"stampede/checker/fleet"
	"stampede/checker/harness"
	"stampede/shop/catalog"
	"stampede/shop/clock"
)

// The checks of a fleet under the faults the chapter is about: a database
// that hangs, under the background rebuild and under a cold miss, and one
// that fails fast while stale readers keep coming.

var refreshDeadlineInfo = check.Info{
	ID: "refresh-deadline",
	Name: "with the database hung, a background rebuild gives up by its deadline: never two of a shelf open at once, " +
		"and none open longer than 10 s",
	Catches: "a rebuild detached with no deadline, so that each expiry of its lock lets one more stale reader start " +
		"another that never ends (wrong/refresh-nodeadline), a deadline longer than a lock it does not renew (wrong/lock-lapses), " +
		"and a deadline set on the reader's context and then dropped by context.WithoutCancel (wrong/refresh-deadline-dropped); " +
		"and, when the rebuild's renewals stall or fail, a watchdog whose renewals have no deadline of their own, one " +
		"that never gives the rebuild up, and a rebuild whose query runs on a context the watchdog does not end " +
		"(wrong/stale-watchdog-no-timeout, wrong/stale-watchdog-never-cancels, wrong/rebuild-off-watchdog)",
}

var backoffInfo = check.Info{
	ID: "backoff",
	Name: "while the database fails, the fleet sends it at most one query a second for the failing shelf, rebuilds " +
		"the healthy one, serves every stale reader at once, and leaves nothing behind them",
	Catches: "a failed rebuild that lets go of its lock at once, so that every stale reader sends the dead database " +
		"another query (wrong/backoff-none), a backoff kept in each instance's memory, which each instance " +
		"spends on its own (wrong/backoff-per-instance), one backoff for every shelf, and a deadline made for each " +
		"reader who then loses the lock, never cancelled",
}

var coldBoundedInfo = check.Info{
	ID: "cold-bounded",
	Name: "with the database hung, readers who find nothing get an error within 10 s on every instance, the lock " +
		"holder's too, or at their own deadline if it comes first; no flight's query outlives its lock",
	Catches: "readers on the lock holder's instance who wait for its flight until their own context ends, behind a query " +
		"with no deadline (wrong/cold-unbounded), a flight whose query stays open for good once its readers have " +
		"given up (wrong/cold-flight-nodeadline), readers who wait for the flight past their own context's end, and " +
		"a flight's deadline longer than its lock",
}

// RefreshDeadline's stale readers keep coming with the database hung for
// case 6's HungFor, HungEvery apart, and detached work may run at most
// LongestWork: the scene of case 6's cold-bounded, on the stale path.
const (
	hungFor     = case06.HungFor
	hungEvery   = case06.HungEvery
	longestWork = case06.LongestWork
	// failingFor is how long Backoff's stale readers come with the
	// database failing, failingEvery how far apart (200 readers), and
	// mostQueries the most queries it may get meanwhile: one a second,
	// and one for the second the first of them began.
	failingFor   = 10 * time.Second
	failingEvery = 50 * time.Millisecond
	mostQueries  = int(failingFor/time.Second) + 1
	// mostSleepers is how many goroutines may sleep on the shops' clock
	// in Backoff once its readers have left: a refresher and a rebuild's
	// timer per instance and shelf, and two to spare. A timer left by each
	// reader who lost the lock is one per 50 ms of a lock's time to live.
	mostSleepers = 2*instances*2 + 2
)

// RefreshDeadline checks that the background rebuild of a stale shelf has
// a deadline no longer than the lock that guards it. The database hangs
// from before the logical expiry on (every query waits until its context
// ends);
// a stale reader comes every quarter second for 12 s, on two instances in
// turn, and each must be served the stale list at once. No two of the
// shelf's queries may be open at once: when the lock expires and a reader
// takes it again, the rebuild before must have given up. No query may stay
// open longer than 10 s (the longest lock the checker accepts), then or
// in the 10 s after the last reader. It catches a rebuild on
// context.WithoutCancel with no deadline, whose queries pile up, one per
// lock time to live, and a deadline longer than the lock.
func RefreshDeadline(h *harness.H, newShop NewShop) check.Verdict {
	sc, fail := filledScene(h, newShop, 2)
	if sc == nil {
		return fail
	}
	defer sc.Close()
	// From before the logical expiry, so that a shop that rebuilds ahead
	// of it meets the hung database too.
	sc.db.Hold()
	before := sc.Reads()
	if err := sc.until(stale); err != nil {
		return case06.StuckVerdict(err)
	}
	for at := stale; at < stale+hungFor; at += hungEvery {
		if err := sc.until(at); err != nil {
			return case06.StuckVerdict(err)
		}
		i := int(at/hungEvery) % 2
		if v := sc.servedAtOnce(i, at, "with the database hung"); !v.Pass {
			return v
		}
		open, oldest := sc.db.Waiting()
		if oldest > longestWork {
			return sc.openTooLong(open, oldest, at)
		}
		if open > 1 {
			return check.Failed(fmt.Sprintf("%d queries open at once", open), fmt.Sprintf("the database hung from before %s on. "+
				"A stale reader set a rebuild going, its query never answered, and when its lock had expired another "+
				"reader took the lock and set another going: at %s %d of the shelf's queries were open at once (%s "+
				"begun since %s). A rebuild that outlives its reader still needs a deadline, on the clock New is given "+
				"(clock.WithTimeout on context.WithoutCancel), and no longer than its lock: each lock's expiry "+
				"otherwise adds one more query that never ends, and one more goroutine", sc.at(stale), sc.at(at), open,
				count(sc.Reads()-before, "read"), sc.at(stale)))
		}
	}
	last := stale + hungFor - hungEvery
	if err := sc.until(last + longestWork); err != nil {
		return case06.StuckVerdict(err)
	}
	if err := sc.settled(); err != nil {
		return case06.StuckVerdict(err)
	}
	started := sc.Reads() - before
	if started == 0 {
		return noRebuild(sc, "rebuild to give up")
	}
	if open, oldest := sc.db.Waiting(); oldest > longestWork {
		return sc.openTooLong(open, oldest, last+longestWork)
	}
	figure := fmt.Sprintf("%s in %v with the database hung, never two open at once, none open past %v",
		count(started, "rebuild read"), hungFor, longestWork)
	for _, stall := range []bool{true, false} {
		v := staleRenewal(h, newShop, stall)
		if !v.Pass {
			return v
		}
		figure += "; " + v.Figure
	}
	return check.Passed(figure)
}

// openTooLong fails RefreshDeadline at moment at, where the oldest of the
// open queries has waited for the hung database longer than any detached
// work may run.
func (sc *scene) openTooLong(open int, oldest, at time.Duration) check.Verdict {
	return check.Failed(fmt.Sprintf("a read open for %v", oldest.Round(time.Millisecond)), fmt.Sprintf("the database "+
		"hung from before %s on; at %s, %s of the shelf's rebuild waited for it, the oldest for %v. Detached work needs "+
		"a deadline of its own, on the clock New is given, no longer than the lock that guards it (at most %v even if "+
		"the lock is kept alive): work with none holds a query and a goroutine for as long as the database hangs",
		sc.at(stale), sc.at(at), count(open, "read"), oldest.Round(time.Millisecond), longestWork))
}

// servedAtOnce sends one reader to instance i at moment at and holds it to
// what every reader of a stale shelf gets: the list, before the clock
// moves.
func (sc *scene) servedAtOnce(i int, at time.Duration, while string) check.Verdict {
	return sc.servedAtOnceShelf(i, catalog.Bestsellers, at, while)
}

// servedAtOnceShelf is servedAtOnce for a reader of shelf.
func (sc *scene) servedAtOnceShelf(i int, shelf string, at time.Duration, while string) check.Verdict {
	c := sc.visitShelf(i, shelf, 1)
	if err := sc.Drive(c.Done, 0); err != nil && !errors.Is(err, fleet.ErrNoBound) {
		return case06.StuckVerdict(err)
	}
	if !c.Done() {
		return check.Failed("a stale reader waited", fmt.Sprintf("at %s, %s, shop-%d's reader found %s stale and "+
			"did not return before the clock moved: a stale value is served at once, while one rebuild runs behind it "+
			"(see no-wait)", sc.at(at), while, i+1, shelf))
	}
	got, bad := listsOf(shelf, c.Outcomes())
	if bad == "" && got == 0 {
		bad = fmt.Sprintf("it got an error, %v", firstErr(c.Outcomes()))
	}
	if bad != "" {
		return check.Failed("", fmt.Sprintf("at %s, %s, with %s stale and inside its physical expiry, shop-%d's "+
			"reader: %s. The stale value serves until its physical expiry, whatever the database does", sc.at(at), while,
			shelf, i+1, bad))
	}
	return check.Passed("")
}

// Backoff checks that a fleet backs off from a database that fails, and
// from it alone. Two shelves are filled; the bestsellers' queries fail
// fast from before the logical expiry on, the new releases' succeed. For
// 10 s a stale reader comes every 50 ms, on four instances in turn, every
// tenth of them for the new releases; each must be served the stale list
// at once. The bestsellers may get at most one query a second meanwhile
// (11 in all), the new releases must be rebuilt, and the readers may leave
// no more goroutines asleep on the shops' clock than a few per instance
// and shelf. It catches a failed rebuild that lets go of the lock at once,
// so that each of the 200 readers retries (the reference did until the
// lab's issue 25), a backoff each instance keeps to itself, one backoff
// for every shelf, which stops the healthy one's rebuild, and a deadline
// made for each reader who loses the lock and never cancelled.
func Backoff(h *harness.H, newShop NewShop) check.Verdict {
	sc, fail := filledScene(h, newShop, instances)
	if sc == nil {
		return fail
	}
	defer sc.Close()
	other := catalog.NewReleases
	c := sc.visitShelf(0, other, 1)
	if err := sc.Drive(c.Done, case06.Patience); err != nil {
		return case06.WaitVerdict(err, "the first reader of "+other+" was")
	}
	// From before the logical expiry, as in RefreshDeadline.
	sc.db.FailShelf(catalog.Bestsellers, errPrimaryDown)
	before, healthy := sc.Reads(), sc.DB().Queries(other)
	if err := sc.until(stale); err != nil {
		return case06.StuckVerdict(err)
	}
	readers := 0
	for at := stale; at < stale+failingFor; at += failingEvery {
		if err := sc.until(at); err != nil {
			return case06.StuckVerdict(err)
		}
		shelf := catalog.Bestsellers
		if readers%10 == 9 {
			shelf = other
		}
		if v := sc.servedAtOnceShelf(readers%instances, shelf, at, "with the database failing for "+catalog.Bestsellers); !v.Pass {
			return v
		}
		readers++
		// servedAtOnce returned with the scene at rest (Drive looks
		// for rest before it asks whether the reader is done): the
		// counts are read on a scene at rest with no second look.
		if q := sc.Reads() - before; q > mostQueries {
			return check.Failed(fmt.Sprintf("%s by %s", count(q, "read"), sc.at(at)), fmt.Sprintf("the database "+
				"failed at once from before %s on (%v), and stale readers came every %v on %d instances. By %s, after %d "+
				"readers, the fleet had sent it %d queries for the shelf, more than one a second: each failed rebuild "+
				"let the next reader try again. Back off from a failing database for the whole fleet: keep the lock a "+
				"failed rebuild holds until it expires, rather than release it, so that no instance tries again "+
				"before then; the stale value serves meanwhile", sc.at(stale), errPrimaryDown, failingEvery, instances,
				sc.at(at), readers, q))
		}
		if n := sc.Clock.Sleepers(); n > mostSleepers {
			return check.Failed(fmt.Sprintf("%d goroutines asleep", n), fmt.Sprintf("at %s, after %d stale readers had "+
				"been served and had left, %d goroutines slept on the shops' clock: more than the rebuilds and "+
				"refreshers of %d instances and 2 shelves need. Each reader left something behind: a deadline whose "+
				"cancel is never called (clock.WithTimeout made before the lock, and the lock lost) sleeps out its "+
				"whole time; call cancel on every path, or make the deadline only once the lock is won",
				sc.at(at), readers, n, instances))
		}
	}
	q := sc.Reads() - before
	if q == 0 {
		return noRebuild(sc, "failed rebuild to back off from")
	}
	if sc.DB().Queries(other) == healthy {
		return check.Failed(other+" never rebuilt", fmt.Sprintf("the database failed for %s only; %s's stale readers "+
			"from %s on were served, and nothing rebuilt it: the backoff from one shelf's failing query stopped "+
			"another shelf's healthy one. Back off per shelf (the shelf's own lock, kept to its expiry)",
			catalog.Bestsellers, other, sc.at(stale)))
	}
	return check.Passed(fmt.Sprintf("%s in %v for %d stale readers, every one served; the healthy shelf rebuilt",
		count(q, "read"), failingFor, readers))
}

// ColdBounded checks that, with the database hung and Redis empty, every
// reader who finds nothing gets an answer in time, on every instance, and
// that no flight's query outlives its lock: case 6's scene
// (case06.ColdBounded), whose flight is case 9's cold miss.
func ColdBounded(h *harness.H, lock case06.NewShop) check.Verdict {
	return case06.ColdBounded(h, lock)
}

var failsFastInfo = check.Info{
	ID: "fails-fast",
	Name: "with nothing in Redis and the database failing every query at once, the fleet backs off on its cold " +
		"path as on its stale one (case 6's scene: at most one query per 0.2 s while 20 readers a second come, " +
		"each told of the error, and the list within 11 s once the database is back)",
	Catches: "a cold flight that lets go of its lock as soon as its query fails, so that every cold reader's next " +
		"flight queries the failing database again (wrong/cold-release-after-failure, the reference until the " +
		"lab's issue 25)",
}

// FailsFast plays case 6's fails-fast on case 9's cold path.
func FailsFast(h *harness.H, lock case06.NewShop) check.Verdict {
	return case06.FailsFast(h, lock)
}

var storeRefusedInfo = check.Info{
	ID: "store-refused",
	Name: "with nothing in Redis and Redis refusing to store the list, the lock holder's readers still get the list " +
		"the database gave",
	Catches: "a fill that turns a failed write of the list into its readers' error, throwing a good list away " +
		"(wrong/store-error-drops-list), and one that hands its readers the list with the write's error " +
		"(wrong/store-error-with-list)",
}

// StoreRefused checks that a cold fill serves the list it read even when
// Redis refuses to store it: case 6's scene (case06.StoreRefused), whose
// fill is case 9's cold miss.
func StoreRefused(h *harness.H, lock case06.NewShop) check.Verdict {
	return case06.StoreRefused(h, lock)
}

var stalledLockInfo = check.Info{
	ID: "stalled-lock",
	Name: "a stale reader whose lock attempt stalls on its way to Redis returns by its own deadline, with the " +
		"stale list, and leaves no lock attempt of its own behind",
	Catches: "the lock taken on a detached context (context.WithoutCancel, or the background rebuild's), so that a " +
		"visitor with a 100 ms deadline waits out Redis's stall (wrong/refresh-lock-detached), or returns at once " +
		"and leaves its lock attempt waiting on a context no reader ends (wrong/lock-attempt-in-goroutine); and an " +
		"attempt the instance's readers share with no deadline of its own (wrong/attempt-flight-no-deadline)",
}

// StalledLock checks that a stale reader's lock attempt runs on the
// reader's own context. The shelf is stale on shop-1; a reader with a
// deadline 100 ms away comes, and its first command that may take a lock
// (a SET NX or a script) is held on its way to Redis until its context
// ends, as a slow network holds it for a client that honours deadlines
// (go-redis with ContextTimeoutEnabled). The reader must return by its
// deadline, with the stale list or its context's error. It catches a lock
// attempt on a context the reader's deadline does not end. Then
// stalledLockCrowd: ten stale readers at once, every lock attempt stalled.
func StalledLock(h *harness.H, newShop NewShop) check.Verdict {
	sc, fail := filledScene(h, newShop, 2)
	if sc == nil {
		return fail
	}
	defer sc.Close()
	var err error
	if err := sc.until(stale); err != nil {
		return case06.StuckVerdict(err)
	}
	held := sc.Tap(0).HoldUntilDone(func(c fleet.Command) bool { return c.Conditional() })
	hurried := sc.VisitWith(1, func(ctx context.Context, _ int) ([]string, error) {
		ctx, cancel := clock.WithTimeout(ctx, sc.Clock, case06.Hurry)
		defer cancel()
		return sc.shops[0].Top(ctx, catalog.Bestsellers)
	})
	start := sc.Clock.Now()
	err = sc.Drive(hurried.Done, case06.Hurry)
	if (errors.Is(err, fleet.ErrNoBound) || case06.NoTimer(err)) && !held.Reached() {
		return check.Failed(fmt.Sprintf("waiting past its deadline of %v", case06.Hurry), fmt.Sprintf("the shelf was stale "+
			"at %s, and a reader of shop-1 whose deadline was %v away was still waiting after it, with nothing held: %s",
			sc.at(stale), case06.Hurry, strings.Join(sc.Places(), "; ")))
	}
	if errors.Is(err, fleet.ErrNoBound) || case06.NoTimer(err) {
		return check.Failed(fmt.Sprintf("waiting past its deadline of %v", case06.Hurry), fmt.Sprintf("the shelf was stale "+
			"at %s, and a reader of shop-1 whose deadline was %v away came; its lock attempt (%s) stalled on its way "+
			"to Redis, and the reader was still waiting after its deadline had passed. Take the lock on the reader's "+
			"own context, so that its deadline bounds the round trip, and detach only the rebuild that follows",
			sc.at(stale), case06.Hurry, held.Held()))
	}
	if err != nil {
		return case06.StuckVerdict(err)
	}
	if !held.Reached() {
		return check.Skipped("not staged: shop-1's stale reader sent no command that may take a lock (a SET NX or a " +
			"script) before it returned, so there was none to stall")
	}
	o := hurried.Outcomes()[0]
	switch {
	case o.Panic != "":
		return check.Failed("", "the stale reader's call panicked: "+o.Panic)
	case o.Err == nil && !slices.Equal(o.Value, catalog.Books(catalog.Bestsellers)):
		return check.Failed("", fmt.Sprintf("the stale reader whose lock attempt stalled got %q, not the list", o.Value))
	}
	got := "the stale list"
	if o.Err != nil {
		got = "its context's error"
	}
	figure := fmt.Sprintf("%s after %v, with its lock attempt stalled", got, sc.Clock.Now().Sub(start))
	crowd := stalledLockCrowd(h, newShop)
	if !crowd.Pass {
		return crowd
	}
	return check.Passed(figure + "; " + crowd.Figure)
}

// stalledReaders is how many stale readers come at once in
// stalledLockCrowd.
const stalledReaders = 10

// stalledLockCrowd is StalledLock's second scene: the shelf is stale on
// shop-1, every command of shop-1's that may take a lock stalls on its way
// to Redis until the context it was sent on ends (Tap.Stall), and
// stalledReaders stale readers come at once, each with a deadline Hurry
// away. Once every reader has returned, at most one lock attempt may
// still wait: the instance's own, shared by its readers (a flight of the
// instance's, with its own deadline). More is one left behind per reader,
// on a context no reader ends: on a slow Redis they pile up, each holding
// a connection of the pool (c09-lock-attempt-in-goroutine). The one left
// must end by its deadline, within case06.LongestWork
// (c09-attempt-flight-no-deadline).
func stalledLockCrowd(h *harness.H, newShop NewShop) check.Verdict {
	sc, fail := filledScene(h, newShop, 2)
	if sc == nil {
		return fail
	}
	defer sc.Close()
	if err := sc.until(stale); err != nil {
		return case06.StuckVerdict(err)
	}
	stall := sc.Tap(0).Stall(func(c fleet.Command) bool { return c.Conditional() })
	defer stall.Release()
	readers := sc.VisitWith(stalledReaders, func(ctx context.Context, _ int) ([]string, error) {
		ctx, cancel := clock.WithTimeout(ctx, sc.Clock, case06.Hurry)
		defer cancel()
		return sc.shops[0].Top(ctx, catalog.Bestsellers)
	})
	if err := sc.Drive(readers.Done, case06.Patience); err != nil {
		return case06.WaitVerdict(err, fmt.Sprintf("%d stale readers of shop-1, its lock attempts stalled, were",
			stalledReaders))
	}
	if err := sc.Settle(); err != nil {
		return case06.StuckVerdict(err)
	}
	if n := stall.Waiting(); n > 1 {
		return check.Failed(fmt.Sprintf("%d lock attempts left waiting by %d readers", n, stalledReaders), fmt.Sprintf(
			"the shelf was stale at %s, and every command of shop-1's that may take a lock stalled on its way to "+
				"Redis; %d stale readers came at once, each with %v to live, and returned, yet %d lock attempts still "+
				"waited after them: each reader left one behind, on a context none of them ends. On a slow Redis every "+
				"stale reader then leaves one more, each holding a connection of the pool, and the readers' own reads "+
				"queue behind them. Take the lock on the reader's own context, so that its deadline bounds the round "+
				"trip (or share one attempt among the instance's readers), and detach only the rebuild that follows",
			sc.at(stale), stalledReaders, case06.Hurry, n))
	}
	left := stall.Waiting()
	if left == 1 {
		// The one attempt left is work that outlives its readers: it has
		// a deadline of its own, at most case06.LongestWork.
		if err := sc.Elapse(case06.LongestWork); err != nil {
			return case06.StuckVerdict(err)
		}
		if stall.Waiting() > 0 {
			return check.Failed("a lock attempt with no deadline", fmt.Sprintf("the shelf was stale at %s, and every "+
				"command of shop-1's that may take a lock stalled on its way to Redis; %d stale readers came at once "+
				"and returned, and the lock attempt they left still waited %v after them: it has no deadline of "+
				"its own. Work that outlives its readers ends by a deadline on the clock New is given (at most %v, "+
				"the contract): an attempt with none, its command lost on the network, keeps the instance from ever "+
				"taking the lock again, and the shelf stays stale", sc.at(stale), stalledReaders, case06.LongestWork, case06.LongestWork))
		}
	}
	return check.Passed(fmt.Sprintf("%d stale readers at once, their lock attempts stalled: %d left waiting after them%s",
		stalledReaders, left, map[bool]string{true: ", and it ended by its deadline"}[left == 1]))
}
