package case09

import (
	"errors"
	"fmt"
	"time"

	"stampede/checker/case06"
	"stampede/checker/check"
	"stampede/checker/fleet"
	"stampede/checker/harness"
)

// The checks of a fleet under the faults the chapter is about: a database
// that hangs, under the background rebuild and under a cold miss, and one
// that fails fast while stale readers keep coming.

var refreshDeadlineInfo = check.Info{
	ID: "refresh-deadline",
	Name: "with the database hung, a background rebuild gives up by its deadline: never two of a shelf open at once, " +
		"and none open longer than 10 s",
	Catches: "a rebuild detached with no deadline, so that each expiry of its lock lets one more stale reader start " +
		"another that never ends (wrong/refresh-nodeadline), a deadline longer than the lock (wrong/refresh-deadline-past-lock), " +
		"and a deadline set on the reader's context and then dropped by context.WithoutCancel (wrong/refresh-deadline-dropped)",
}

var backoffInfo = check.Info{
	ID: "backoff",
	Name: "while the database fails, the fleet sends it at most one query a second per shelf, and every stale reader is " +
		"still served at once",
	Catches: "a failed rebuild that lets go of its lock at once, so that every stale reader sends the dead database " +
		"another query (wrong/backoff-none), and a backoff kept in each instance's memory, which each instance " +
		"spends on its own (wrong/backoff-per-instance)",
}

var coldBoundedInfo = check.Info{
	ID: "cold-bounded",
	Name: "with the database hung, readers who find nothing get an error within 10 s on every instance, the lock " +
		"holder's too, and the holder's query has ended by then",
	Catches: "readers on the lock holder's instance who wait for its flight until their own context ends " +
		"(wrong/cold-wait-unbounded), and a flight whose query has no deadline, which stays open for good once its " +
		"readers have given up (wrong/cold-flight-nodeadline)",
}

const (
	// hungFor is how long RefreshDeadline's stale readers keep coming
	// with the database hung, and hungEvery how far apart: six of the
	// reference's 2 s locks, each with a reader at the instant it expires.
	hungFor   = 12 * time.Second
	hungEvery = 250 * time.Millisecond
	// longestWork is the longest detached work may run: the longest lock
	// the checker accepts (case 6's), which a rebuild may keep alive.
	longestWork = 10 * time.Second
	// failingFor is how long Backoff's stale readers come with the
	// database failing, failingEvery how far apart (200 readers), and
	// mostQueries the most queries it may get meanwhile: one a second,
	// and one for the second the first of them began.
	failingFor   = 10 * time.Second
	failingEvery = 50 * time.Millisecond
	mostQueries  = int(failingFor/time.Second) + 1
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
	sc, err := newScene(h, newShop, 2)
	if err != nil {
		return case06.WorldVerdict(err)
	}
	defer sc.Close()
	if v := sc.fill(); !v.Pass {
		return v
	}
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
	return check.Passed(fmt.Sprintf("%s in %v with the database hung, never two open at once, none open past %v",
		count(started, "rebuild read"), hungFor, longestWork))
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
	c := sc.visit(i, 1)
	if err := sc.Drive(c.Done, 0); err != nil && !errors.Is(err, fleet.ErrNoBound) {
		return case06.StuckVerdict(err)
	}
	if !c.Done() {
		return check.Failed("a stale reader waited", fmt.Sprintf("at %s, %s, shop-%d's reader found the list stale and "+
			"did not return before the clock moved: a stale value is served at once, while one rebuild runs behind it "+
			"(see no-wait)", sc.at(at), while, i+1))
	}
	got, bad := lists(c.Outcomes())
	if bad == "" && got == 0 {
		bad = fmt.Sprintf("it got an error, %v", firstErr(c.Outcomes()))
	}
	if bad != "" {
		return check.Failed("", fmt.Sprintf("at %s, %s, with the list stale and inside its physical expiry, shop-%d's "+
			"reader: %s. The stale value serves until its physical expiry, whatever the database does", sc.at(at), while,
			i+1, bad))
	}
	return check.Passed("")
}

// Backoff checks that a fleet backs off from a database that fails. It
// fails fast from before the logical expiry on; for 10 s a stale reader comes
// every 50 ms, on four instances in turn, and each must be served the
// stale list at once; the database may get at most one query a second
// meanwhile (11 in all). It catches a failed rebuild that lets go of the
// lock at once, so that each of the 200 readers retries (the reference
// did until the lab's issue 25), and a backoff each instance keeps to
// itself.
func Backoff(h *harness.H, newShop NewShop) check.Verdict {
	sc, err := newScene(h, newShop, instances)
	if err != nil {
		return case06.WorldVerdict(err)
	}
	defer sc.Close()
	if v := sc.fill(); !v.Pass {
		return v
	}
	sc.db.Fail(errPrimaryDown) // from before the logical expiry, as in RefreshDeadline
	before := sc.Reads()
	if err := sc.until(stale); err != nil {
		return case06.StuckVerdict(err)
	}
	readers := 0
	for at := stale; at < stale+failingFor; at += failingEvery {
		if err := sc.until(at); err != nil {
			return case06.StuckVerdict(err)
		}
		if v := sc.servedAtOnce(readers%instances, at, "with the database failing"); !v.Pass {
			return v
		}
		readers++
		if err := sc.settled(); err != nil {
			return case06.StuckVerdict(err)
		}
		if q := sc.Reads() - before; q > mostQueries {
			return check.Failed(fmt.Sprintf("%s by %s", count(q, "read"), sc.at(at)), fmt.Sprintf("the database "+
				"failed at once from before %s on (%v), and stale readers came every %v on %d instances. By %s, after %d "+
				"readers, the fleet had sent it %d queries for the shelf, more than one a second: each failed rebuild "+
				"let the next reader try again. Back off from a failing database for the whole fleet: keep the lock a "+
				"failed rebuild holds until it expires, rather than release it, so that no instance tries again "+
				"before then; the stale value serves meanwhile", sc.at(stale), errPrimaryDown, failingEvery, instances,
				sc.at(at), readers, q))
		}
	}
	q := sc.Reads() - before
	if q == 0 {
		return noRebuild(sc, "failed rebuild to back off from")
	}
	return check.Passed(fmt.Sprintf("%s in %v for %d stale readers, every one served", count(q, "read"), failingFor, readers))
}

// ColdBounded checks that, with the database hung and Redis empty, the
// readers of the lock holder's own instance get an answer within the
// checker's longest budget, as the other instances' do, and that the
// holder's query has given up by then. Shop-1's three readers share its
// flight, which takes the lock; shop-2's reader loses it. It catches
// readers that wait for the flight on their own context only, which ends
// when the visitor gives up, not when the shop does, and a flight whose
// query outlives every reader.
func ColdBounded(h *harness.H, newShop NewShop) check.Verdict {
	sc, err := newScene(h, newShop, 2)
	if err != nil {
		return case06.WorldVerdict(err)
	}
	defer sc.Close()
	sc.db.Hold()
	holder := sc.visit(0, 3)
	if err := sc.settled(); err != nil {
		return case06.StuckVerdict(err)
	}
	if n, _ := sc.db.Waiting(); n == 0 {
		return check.Failed("no query", "with Redis empty, shop-1's three readers sent the database no query")
	}
	loser := sc.visit(1, 1)
	start := sc.Clock.Now()
	err = sc.Drive(func() bool { return holder.Done() && loser.Done() }, maxBudget)
	waited := sc.Clock.Now().Sub(start).Round(time.Millisecond)
	var stuck *harness.Stuck
	if errors.As(err, &stuck) && stuck.Cause == harness.Deadlocked {
		// Nothing sleeps on the clock: they wait for the hung query, with
		// no bound at all.
		err = fleet.ErrNoBound
	}
	if errors.Is(err, fleet.ErrNoBound) {
		who := "shop-1's readers, on the instance whose flight held the lock,"
		if holder.Done() {
			who = "shop-2's reader, which lost the lock,"
		}
		return check.Failed(fmt.Sprintf("waiting after %v", maxBudget), fmt.Sprintf("the database hung, and with nothing "+
			"in Redis %s were still waiting, %v of the shops' clock after they came. Every reader's wait has a budget, on every "+
			"instance: bound the wait for the flight with the clock New is given (clock.WithTimeout around the "+
			"select), and past it return a *TryAgain", who, maxBudget))
	}
	if err != nil {
		return case06.StuckVerdict(err)
	}
	for i, o := range append(holder.Outcomes(), loser.Outcomes()...) {
		switch {
		case o.Panic != "":
			return check.Failed("", fmt.Sprintf("reader %d's call panicked: %s", i+1, o.Panic))
		case o.Err == nil:
			return check.Failed("", fmt.Sprintf("reader %d got %q, though the database never answered", i+1, o.Value))
		}
	}
	if err := sc.Elapse(maxBudget - waited); err != nil && !errors.Is(err, fleet.ErrNoBound) {
		return case06.StuckVerdict(err)
	}
	if err := sc.settled(); err != nil {
		return case06.StuckVerdict(err)
	}
	if _, oldest := sc.db.Waiting(); oldest >= maxBudget {
		return check.Failed(fmt.Sprintf("a read open for %v", oldest.Round(time.Millisecond)), fmt.Sprintf("the database "+
			"hung; every reader had its answer within %v, and %v after the first came, shop-1's flight still waited "+
			"for the database. A flight that outlives its first reader needs a deadline of its own, on the clock New "+
			"is given, no longer than its lock: with none it holds a query and a goroutine for as long as the database "+
			"hangs", waited, maxBudget))
	}
	return check.Passed(fmt.Sprintf("every reader answered within %v; no query open after %v", waited, maxBudget))
}
