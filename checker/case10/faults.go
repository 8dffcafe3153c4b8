package case10

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"stampede/checker/check"
	"stampede/checker/fleet"
	"stampede/checker/harness"
	"stampede/checker/point"
	"stampede/shop/catalog"
)

// The checks of a filler under the faults the chapter is about: a read of
// the row that fails or whose visitor leaves, and writes that keep
// refusing a reader's fills.

// letGoInfo is the check that a filler who will not fill lets its lease go.
var letGoInfo = check.Info{
	ID:   "let-go",
	Name: "a filler whose read fails, or whose visitor leaves in the middle of it, lets its lease go: the next visitor reads at once (after a failed read, within the contract's half second more)",
	Catches: "a lease kept after a failed or cancelled read, or after a read whose visitor's deadline passed (taken for a failing database: " +
		"wrong/deadline-as-dbfail), or after a Redis command that failed after a good " +
		"read or right after the lease (the second look), so that the fleet waits out its time to live while nobody reads; a lease deleted on the visitor's " +
		"own context, which is already cancelled when it leaves; a lease let go only when the database fails; and " +
		"one let go with a plain DEL, which ends the lease of the filler who took over; and a backoff after a " +
		"failed read that shortens the lease with a plain PEXPIRE, which cuts the lease of the filler who took " +
		"over (wrong/backoff-plain-pexpire); a backoff longer than the contract's half second (wrong/backoff-one-second); " +
		"and a fill whose visitors, leaving, look at how many are left in one step and count themselves out in another: " +
		"two who leave at once, taking turns one statement each, both see the other, and nobody ends the fill (wrong/leave-check-then-dec); " +
		"and a read that returns without waiting for its keepalive, whose renewal, on its way to Redis as the read " +
		"fails, lands after the backoff and gives the lease its whole time to live back (wrong/renew-not-awaited); " +
		"and a let-go with no deadline of its own, which waits for good on a Redis command stalled on the network " +
		"(wrong/letgo-no-deadline)",
}

// writerLeavesInfo is the check that a write's delete does not depend on
// its visitor staying.
var writerLeavesInfo = check.Info{
	ID:   "writer-leaves",
	Name: "a write whose visitor leaves as its commit returns still deletes the old price",
	Catches: "the delete after the commit sent on the writer's own context: when the client hangs up during the " +
		"commit, the commit stands, the delete fails with the cancelled context, and the old price is served for " +
		"its whole time to live; one detached only when that context was cancelled, not when its deadline passed; " +
		"and one detached with no deadline of its own, which waits for good on a delete stalled on the network " +
		"(wrong/write-delete-no-deadline)",
}

// conflictBudgetInfo is the check that a refused fill does not escape the
// visitor's budget.
var conflictBudgetInfo = check.Info{
	ID:   "conflict-budget",
	Name: "a visitor whose every fill is refused, by writes that commit during each of its reads, returns within a bound",
	Catches: "a refused fill that reads again without looking at the budget, so that writes faster than reads " +
		"keep the visitor reading for as long as they last, and a budget that " +
		"starts again with every try",
}

const (
	// letGoWithin is how long, on the shops' clock, the visitor after a
	// failed fill may take: one healthy read of the row. A lease kept
	// after the failure holds it for the lease's whole time to live.
	letGoWithin = rebuild
	// maxFailBackoff is how long a filler whose read of the row failed
	// may keep its lease as the fleet's backoff from a failing database
	// (see DatabaseDown), the contract's half second: the next visitor may
	// wait that much more.
	maxFailBackoff = 500 * time.Millisecond
	// visitorDeadline is the deadline of LetGo's visitor whose time runs
	// out while the row is read.
	visitorDeadline = 300 * time.Millisecond
	// conflictWithin is the bound on the visitor refused again and again:
	// the longest lease the checker accepts, ten times the reference's
	// budget.
	conflictWithin = maxLease
	// conflicts is how many of the reader's reads a write overtakes in
	// ConflictBudget: at a healthy read's time each, they last 2 s past
	// conflictWithin, so that a reader who reads again without a budget is
	// still reading at the bound.
	conflicts = int(conflictWithin/rebuild) + 10
)

// errDown is the error of a database that is down, and errRedis that of a
// Redis command whose connection dropped.
var (
	errDown  = errors.New("the database is down")
	errRedis = errors.New("read tcp 127.0.0.1:6379: i/o timeout")
)

// giveUp is how a filler's fill fails in a scene of LetGo.
type giveUp int

const (
	readFails      giveUp = iota // the read of the row fails
	visitorLeaves                // the visitor leaves while the row is read
	deadlinePasses               // the visitor's deadline passes while the row is read
	redisFails                   // the first Redis command after a good read fails
	leaseThenFails               // the first Redis command after the lease is taken fails
	bothLeave                    // the fill's two visitors leave at one instant, in lockstep
	renewalLate                  // the read fails while a renewal of the lease is on its way to Redis
)

// LetGo checks that a filler who will not fill lets its lease go, and only
// its own. Shop-1's visitor misses and takes the lease; then its read of
// the row fails, or the read is held and the visitor leaves (its context
// is cancelled) or its deadline passes, or the read is good and the next
// Redis command it sends fails, or the read fails as a renewal of the
// lease is on its way to Redis, which runs it only once shop-1 is done
// with the failure (renewalOnItsWay; one scene each). Nobody fills under that
// lease, so a visitor on shop-2 who comes next must get the price within
// letGoWithin of the shops' clock. Then a visitor comes for the book as
// the last visitor of its fill leaves (joinAsLastLeaves). The last scenes
// let shop-1's lease expire first and another filler take over
// (ownLeaseOnly), or have another filler take over while shop-1's letting
// go is on its way (lateLetGo). It catches a lease kept after a failed or cancelled read, a lease
// deleted on the visitor's own cancelled context, one let go only when the
// database fails or only on some of the paths that give up, one let go
// with a plain DEL, which ends the lease of the filler who took over, and
// a flight whose visitors come and go in steps that let the last one end
// it under a newcomer.
func LetGo(h *harness.H, newShop NewShop) check.Verdict {
	late := "" // what the late renewal's scene saw, when it happened
	for _, how := range []giveUp{readFails, renewalLate, visitorLeaves, deadlinePasses, redisFails, leaseThenFails, bothLeave} {
		v := letGo(h, newShop, how)
		if !v.Pass {
			return v // a failure, or a skip: code that takes no lease
		}
		if how == renewalLate && v.Figure != "" {
			late = " (" + v.Figure + ")"
		}
	}
	for _, lead := range leads {
		for _, reverse := range []bool{false, true} {
			if v := joinAsLastLeaves(h, newShop, reverse, lead); !v.Pass {
				return v
			}
		}
	}
	for _, how := range []giveUp{visitorLeaves, readFails} {
		if v := ownLeaseOnly(h, newShop, how); !v.Pass {
			return v
		}
	}
	for n := 1; n <= lateCommands; n++ {
		if v := lateLetGo(h, newShop, n); !v.Pass {
			return v
		}
	}
	stalled := stalledDetached(h, newShop, readFailed, visitorGone)
	if !stalled.Pass {
		return stalled
	}
	return check.Passed("after a failed read" + late + ", a visitor who left in the middle of one, one whose deadline passed, a Redis command that " +
		"failed after one and one that failed right after the lease, and two visitors of one fill who left together, the next visitor read at once; a " +
		"visitor who came as the last one left got the price; a lease taken over was left to its new holder, whether the old one's visitor left or " +
		"its read failed or its letting go came late; " + stalled.Figure)
}

// letGo is one scene of LetGo: the filler's fill fails as how says.
func letGo(h *harness.H, newShop NewShop, how giveUp) check.Verdict {
	var strike atomic.Bool // renewalLate: fail the next read let through
	reads := fleet.HoldCalls(1)
	if how == leaseThenFails {
		reads = fleet.HoldCalls()
	}
	switch how {
	case readFails:
		reads = fleet.HoldCalls()
		reads.Then = catalog.RowHook(fleet.NthQuery(fleet.FailWith(errDown), 1))
	case renewalLate:
		// Only the read the scene fails, once it lets it go: a read that
		// ended first, by a deadline of its own, is not struck, nor is
		// the next one.
		reads.Then = func(context.Context, string) error {
			if strike.CompareAndSwap(true, false) {
				return errDown
			}
			return nil
		}
	}
	s, err := newScene(h, newShop, 2, reads, fleet.HoldCalls())
	if err != nil {
		return fleet.Unreachable(err)
	}
	defer s.Close()
	var r *harness.Crowd[int]
	var what string
	crossed := false // a renewal was held on its way as the read failed
	switch how {
	case readFails:
		r = s.Read(0)
		what = "its read of the row failed (" + errDown.Error() + ")"
	case renewalLate:
		r = s.Read(0)
		v, late := renewalOnItsWay(s, r)
		if !v.Pass || late == nil {
			// No renewal while the lease lived (no keepalive): readFails
			// is this scene.
			return v
		}
		defer late.Release()
		strike.Store(true)
		s.reads.Gate(1).Open()
		// Everything shop-1 does about the failure, then the renewal.
		if err := s.Settle(); err != nil {
			return stuckVerdict(err)
		}
		if strike.Swap(false) {
			// The read had ended on its own before it was failed: the
			// scene did not happen (slow-read judges such a read).
			return check.Passed("")
		}
		late.Release()
		crossed = true
		what = fmt.Sprintf("its read of the row failed (%s), and a renewal of its lease it had sent before (%s) "+
			"reached Redis only after that, slow on the network", errDown, fleet.Shorten(late.Held()))
	case leaseThenFails:
		// The command that may take the lease is held on its way, and the
		// one after it fails: the second look, in most answers.
		lease := s.taps[0].Hold(func(c fleet.Command) bool { return c.Conditional() || c.Scripted() })
		r = s.Read(0)
		if err := s.Drive(func() bool { return lease.Reached() || r.Done() }, patience); err != nil {
			return waitVerdict(err, "shop-1's visitor, with Redis empty, was")
		}
		if !lease.Reached() {
			return check.Skipped("not staged: shop-1's visitor, with Redis empty, sent no command that could take a " +
				"lease (lease-coalesces judges a fleet without one)")
		}
		// Nth counts the held command too, when it is let go.
		s.taps[0].Fail(fleet.Nth(2), errRedis, 1)
		lease.Release()
		what = "the next Redis command it sent failed (" + errRedis.Error() + ")"
	case visitorLeaves, deadlinePasses, redisFails, bothLeave:
		var leave, leave2 context.CancelFunc
		var r2 *harness.Crowd[int]
		if how == deadlinePasses {
			r = s.ReadWithin(0, visitorDeadline)
		} else {
			r, leave = s.ReadLeaving(0)
		}
		if how == bothLeave {
			r2, leave2 = s.ReadLeaving(0)
		}
		if err := s.Settle(); err != nil {
			return stuckVerdict(err)
		}
		if s.reads.Calls() == 0 {
			return s.neverRead()
		}
		if keys, err := s.World.Keys(s.H.Context()); err == nil && len(keys) == 0 {
			return check.Skipped("not staged: shop-1's visitor read the row with nothing in Redis: it took no lease, " +
				"so there was none to let go (lease-coalesces and stale-set judge a fleet without one)")
		}
		switch how {
		case visitorLeaves:
			leave()
			what = "its visitor left while the row was being read (its context was cancelled)"
		case bothLeave:
			// At one instant, taking turns one statement each: a fill
			// whose visitors look at how many are left in one step and
			// count themselves out in another sees two left, twice, and
			// nobody ends it (c10-leave-check-then-dec).
			v := h.Under(point.Lockstep(false), func() check.Verdict {
				leave()
				leave2()
				if err := s.Drive(func() bool { return r.Done() && r2.Done() }, patience); err != nil {
					return waitVerdict(err, "shop-1's two visitors of one fill, after they left together, were")
				}
				return check.Passed("")
			})
			if !v.Pass {
				return v
			}
			what = "then it and a second visitor who had joined its fill left at the same instant, while the row was being read"
		case deadlinePasses:
			what = fmt.Sprintf("its visitor's deadline (%v) passed while the row was being read (context.DeadlineExceeded, "+
				"which is no news about the database either)", visitorDeadline)
		default:
			s.taps[0].Fail(fleet.Nth(1), errRedis, 1)
			s.reads.Gate(1).Open()
			what = "its read was good, and the next Redis command it sent failed (" + errRedis.Error() + ")"
		}
	}
	if err := s.Drive(r.Done, patience); err != nil {
		return waitVerdict(err, "shop-1's visitor, after "+what+", was")
	}
	if o := r.Outcomes()[0]; o.Panic != "" {
		return check.Failed("", "shop-1's visitor's call panicked: "+o.Panic)
	}
	held := s.Cached()
	if crossed {
		if v := backoffKept(s, what); !v.Pass {
			return v
		}
	}
	if how != readFails && how != renewalLate {
		// Only a failed read of the row is news about the database, and a
		// reason to keep the lease a moment as a backoff.
		keys, err := s.World.Keys(h.Context())
		if err != nil {
			return fleet.Unreachable(err)
		}
		if len(keys) > 0 {
			return check.Failed(keys[0].Name+" left", fmt.Sprintf("shop-1's visitor took the lease and %s; it returned, "+
				"and Redis still held %s. Nothing is wrong with the database: a filler that gives up for any other "+
				"reason ends its lease at once, not in a while (keeping it is the backoff for a failed read of the "+
				"row only), or every abandoned request holds the book from the whole fleet", what, held))
		}
	}
	next := s.Read(1)
	within, backoff := letGoWithin, ""
	if how == readFails || how == renewalLate {
		within += maxFailBackoff
		backoff = fmt.Sprintf(" (after a failed read, keeping it a moment as a backoff from the database is right, "+
			"for %v at most)", maxFailBackoff)
	}
	err = s.Drive(next.Done, within)
	if errors.Is(err, fleet.ErrNoBound) {
		return check.Failed(fmt.Sprintf("still waiting after %v", within), fmt.Sprintf("shop-1's visitor took the "+
			"lease and %s; it returned, and shop-2's visitor who came next was still waiting after %v of the shops' "+
			"clock. Nobody was reading the row: the lease was left to run out its time to live. A filler that will "+
			"not fill must end its own lease%s (a delete that checks the token, in one script) on every path that "+
			"gives up, on a context of its own with a short deadline: the visitor's is cancelled when it leaves. "+
			"Redis held when shop-1's visitor returned: %s", what, within, backoff, held))
	}
	if err != nil {
		return stuckVerdict(err)
	}
	switch o := next.Outcomes()[0]; {
	case o.Panic != "":
		return check.Failed("", "shop-2's visitor's call panicked: "+o.Panic)
	case o.Err != nil:
		return check.Failed("", fmt.Sprintf("shop-1's visitor took the lease and %s; shop-2's visitor who came next got "+
			"an error (%v) with nobody reading the row. A filler that will not fill must end its own lease on every "+
			"path that gives up, on a context of its own: the visitor's is cancelled when it leaves. Redis held when "+
			"shop-1's visitor returned: %s", what, o.Err, held))
	case o.Value != oldPrice:
		return check.Failed("", fmt.Sprintf("shop-2's visitor got %s; the price was %s", cents(o.Value), cents(oldPrice)))
	}
	if crossed {
		return check.Passed("one with a renewal landing after it")
	}
	return check.Passed("")
}

// renewalOnItsWay is the start of LetGo's scene of a late renewal: shop-1's
// visitor misses, takes the lease and reads the row, held; the first
// command shop-1 sends that may write a key (a renewal, in most answers)
// goes through, so that a script it runs is known to Redis by then; the
// next one is held on its way (Tap.HoldSent), as a command slow on the
// network is. It returns that hold, or nil when shop-1 sent no such
// command while the lease lived: an answer with no keepalive, to which
// the scene is LetGo's failed read.
func renewalOnItsWay(s *scene, r *harness.Crowd[int]) (check.Verdict, *fleet.Hold) {
	if err := s.Settle(); err != nil {
		return stuckVerdict(err), nil
	}
	if s.reads.Calls() == 0 {
		return s.neverRead(), nil
	}
	keys, err := s.World.Keys(s.H.Context())
	if err != nil {
		return fleet.Unreachable(err), nil
	}
	if len(keys) == 0 {
		return check.Skipped("not staged: shop-1's visitor read the row with nothing in Redis: it took no lease, " +
			"so there was none to let go (lease-coalesces and stale-set judge a fleet without one)"), nil
	}
	tap := s.taps[0]
	writes := func(c fleet.Command) bool { return c.Keyed() && !c.Reads() }
	from := len(tap.Log())
	renewed := func() bool {
		for _, c := range tap.Log()[from:] {
			if writes(c) && !c.NoScript && c.Said != "" && !strings.HasPrefix(c.Said, "error") {
				return true
			}
		}
		return false
	}
	// Within what is left of the lease, at most: a keepalive renews it
	// before it lapses.
	within := func() time.Duration {
		keys, err := s.World.Keys(s.H.Context())
		if err != nil || len(keys) == 0 || keys[0].Forever {
			return maxLease
		}
		return min(keys[0].TTL, maxLease)
	}
	// Nothing asleep on the clock (a Deadlocked Stuck) is a shop that
	// waits for its read alone: no renewal is coming either.
	noRenewal := func(err error) bool {
		var st *harness.Stuck
		return err == nil || errors.Is(err, fleet.ErrNoBound) || errors.As(err, &st) && st.Cause == harness.Deadlocked
	}
	if err := s.Drive(func() bool { return renewed() || r.Done() }, within()); !noRenewal(err) {
		return stuckVerdict(err), nil
	}
	if !renewed() || r.Done() {
		return check.Passed(""), nil
	}
	late := tap.HoldSent(writes)
	if err := s.Drive(func() bool { return late.Reached() || r.Done() }, within()); !noRenewal(err) {
		late.Release()
		return stuckVerdict(err), nil
	}
	if !late.Reached() {
		late.Release()
		return check.Passed(""), nil
	}
	return check.Passed(""), late
}

// backoffKept checks, after LetGo's scene of a late renewal, that no key
// shop-1 left lives longer than a failed read's backoff: a renewal that
// lands after the backoff was set brings the lease's whole time to live
// back.
func backoffKept(s *scene, what string) check.Verdict {
	keys, err := s.World.Keys(s.H.Context())
	if err != nil {
		return fleet.Unreachable(err)
	}
	for _, k := range keys {
		if k.Forever || k.TTL > maxFailBackoff {
			return check.Failed(k.Name+" "+ttlText(k), fmt.Sprintf("shop-1's visitor took the lease and %s. Once "+
				"shop-1 was done, %s had %s, where a failed read may keep the lease %v at most as a backoff: the "+
				"renewal landed after the backoff was set, and brought the lease's whole time to live back, so the "+
				"fleet waits it out while nobody reads. Stop the keepalive and wait for it to return (its renewal "+
				"answered) before the read returns, so that nothing of the read's lands after it",
				what, k.Name, ttlText(k), maxFailBackoff))
		}
	}
	return check.Passed("")
}

// ownLeaseOnly is LetGo's last scenes: shop-1's visitor takes the lease
// and reads, and then shop-1 freezes (a long pause of the process, or a
// partition): none of its commands reaches Redis, so whatever keeps its
// lease alive cannot. Past any lease (maxLease), shop-2's visitor takes a
// new lease and reads in turn, held there. Then shop-1 gives up as how
// says (its visitor leaves, or its read fails, after which it may keep its
// lease a moment as a backoff), and comes back. Giving up, shop-1 may end
// or shorten its own lease, which has expired, and nothing another filler
// holds: every key Redis held before it came back must be there after, as
// it was and with the time to live it had (the shops' clock has not
// moved meanwhile).
func ownLeaseOnly(h *harness.H, newShop NewShop, how giveUp) check.Verdict {
	reads := fleet.HoldCalls(1, 2)
	gaveUp := "shop-1's visitor left"
	if how == readFails {
		// The first read to get past its gate is shop-1's: it fails.
		reads.Then = catalog.RowHook(fleet.NthQuery(fleet.FailWith(errDown), 1))
		gaveUp = "shop-1's read failed (" + errDown.Error() + ")"
	}
	s, err := newScene(h, newShop, 2, reads, fleet.HoldCalls())
	if err != nil {
		return fleet.Unreachable(err)
	}
	defer s.Close()
	r1, leave, v := s.fillerReading()
	defer leave()
	if !v.Pass {
		return v
	}
	resume := s.taps[0].Pause()
	defer resume()
	if err := s.Elapse(maxLease + 10*time.Millisecond); err != nil {
		return stuckVerdict(err)
	}
	r2 := s.Read(1)
	if err := s.Drive(func() bool { return s.reads.Calls() >= 2 || r2.Done() }, patience); err != nil {
		return waitVerdict(err, "shop-2's visitor, after shop-1's lease had expired, was")
	}
	if s.reads.Calls() < 2 {
		return check.Failed("", fmt.Sprintf("shop-1 took its lease, began to read and froze: for %v none of its commands "+
			"reached Redis; then shop-2's visitor did not read the row (it got %s). A lease must lapse when its holder "+
			"cannot renew it: it lives at most %v unrenewed, and past it another visitor takes over. Redis held: %s",
			maxLease, describe(r2.Outcomes()[0]), maxLease, s.Cached()))
	}
	// Shop-2 is slow, not dead: its lease must not age while shop-1 gives up.
	if err := s.KeepAlive(); err != nil {
		return fleet.Unreachable(err)
	}
	before, err := s.values()
	if err != nil {
		return fleet.Unreachable(err)
	}
	held := s.Cached()
	if how == readFails {
		s.reads.Gate(1).Open()
	} else {
		leave()
	}
	// Shop-1 comes back once its giving up has reached it: what it sends
	// then is what a filler that gave up sends, in every run. The clock
	// stays still until every key is compared, so a time to live that
	// changed was changed by shop-1.
	if err := s.Settle(); err != nil {
		return stuckVerdict(err)
	}
	resume()
	name, what, figure, v := s.changedSince(before)
	if !v.Pass {
		return v
	}
	if name != "" {
		return check.Failed(figure, fmt.Sprintf("shop-1 froze while it read, past its lease; "+
			"shop-2's visitor took a new lease and was reading; then %s, shop-1 came back, and it %s %s, which it no "+
			"longer held. Redis held before: %s; after: %s. A filler may end, renew or shorten its own lease only: "+
			"do it in a script that checks the token, not with a plain DEL, SET or PEXPIRE, which end, take or cut "+
			"whichever lease is there and let the next visitor read beside its holder", gaveUp, what, name, held,
			s.Cached()))
	}
	if err := s.Drive(r1.Done, patience); err != nil {
		return waitVerdict(err, "shop-1's visitor, after "+gaveUp+", was")
	}
	s.reads.Gate(2).Open()
	if err := s.Drive(r2.Done, patience); err != nil {
		return waitVerdict(err, "shop-2's visitor was")
	}
	return check.Passed("")
}

// lateCommands is how many of a filler's commands after it gave up
// lateLetGo holds in turn: a lease let go by a script takes one, by a
// look and a delete two, and a shop may send one more before them.
const lateCommands = 3

// lateLetGo is LetGo's scene of a filler slow to let go: shop-1's visitor
// takes the lease, reads and leaves, and the nth command shop-1 sends from
// then on is held on its way (a slow network, a pause of the process)
// while a write on shop-2 ends shop-1's lease (as the contract says a
// write's delete does) and shop-2's visitor takes a new lease and reads. Then the held command goes on: every key must be as it was, as
// in ownLeaseOnly. It catches a lease let go in two commands, a GET that
// finds the filler's own token and then a DEL, which ends the new holder's
// lease when it comes late (c10-letgo-get-then-del). A shop that sends
// fewer than n commands after it gave up plays no scene.
func lateLetGo(h *harness.H, newShop NewShop, n int) check.Verdict {
	s, err := newScene(h, newShop, 2, fleet.HoldCalls(1, 2), fleet.HoldCalls())
	if err != nil {
		return fleet.Unreachable(err)
	}
	defer s.Close()
	r1, leave, v := s.fillerReading()
	defer leave()
	if !v.Pass {
		return v
	}
	sent := 0 // the Tap calls match under its lock, once a command until one is caught
	slow := s.taps[0].Hold(func(fleet.Command) bool { sent++; return sent == n })
	leave()
	if err := s.Drive(func() bool { return slow.Reached() || r1.Done() }, patience); err != nil {
		return waitVerdict(err, "shop-1's visitor, after it left while the row was read, was")
	}
	if !slow.Reached() {
		return check.Passed("")
	}
	if v := s.WriteDone(1, newPrice); !v.Pass {
		return v
	}
	r2 := s.Read(1)
	if err := s.Drive(func() bool { return s.reads.Calls() >= 2 || r2.Done() }, patience); err != nil {
		return waitVerdict(err, "shop-2's visitor, after shop-2's write had ended shop-1's lease, was")
	}
	if s.reads.Calls() < 2 {
		return check.Passed("") // a lease a write does not end is the other checks' to judge
	}
	if err := s.KeepAlive(); err != nil {
		return fleet.Unreachable(err)
	}
	before, err := s.values()
	if err != nil {
		return fleet.Unreachable(err)
	}
	held := s.Cached()
	slow.Release()
	if err := s.Drive(r1.Done, patience); err != nil {
		return waitVerdict(err, "shop-1's visitor, once its slow command had gone, was")
	}
	name, what, figure, v := s.changedSince(before)
	if !v.Pass {
		return v
	}
	if name != "" {
		return check.Failed(figure, fmt.Sprintf("shop-1's visitor took the lease, read the row and left; shop-1 let "+
			"its lease go, and the %s command it sent after it gave up (%s) was slow to reach Redis (a slow network, "+
			"a pause). Meanwhile a write on shop-2 ended the lease, and shop-2's visitor took a new lease and was "+
			"reading. When the "+
			"command arrived, shop-1 %s %s, which it no longer held. Redis held before: %s; after: %s. A look at the "+
			"token and a delete are two commands, and anything can happen between them: end your own lease in one "+
			"script that checks the token", ordinal(n), slow.Held(), what, name, held, s.Cached()))
	}
	s.reads.Gate(2).Open()
	if err := s.Drive(r2.Done, patience); err != nil {
		return waitVerdict(err, "shop-2's visitor was")
	}
	return check.Passed("")
}

// seen is a key's value and time to live, as values found them.
type seen struct {
	value string
	ttl   time.Duration
}

// values returns every key Redis holds, with its value and time to live.
func (s *scene) values() (map[string]seen, error) {
	ctx := s.H.Context()
	keys, err := s.World.Keys(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]seen{}
	for _, k := range keys {
		v, ok, err := s.World.Get(ctx, k.Name)
		if err != nil {
			return nil, err
		}
		if ok {
			out[k.Name] = seen{v, k.TTL}
		}
	}
	return out, nil
}

// changedSince lets the scene settle and compares every key Redis holds
// with before: the first key of before (by name) no longer there as it
// was, with a time to live no shorter, what became of it ("took away" or
// "changed", for the story) and a figure; name is "" when every key is as
// it was. v fails when the scene did not settle or Redis was not read.
func (s *scene) changedSince(before map[string]seen) (name, verb, figure string, v check.Verdict) {
	if err := s.Settle(); err != nil {
		return "", "", "", stuckVerdict(err)
	}
	after, err := s.values()
	if err != nil {
		return "", "", "", fleet.Unreachable(err)
	}
	for _, name := range slices.Sorted(maps.Keys(before)) {
		was := before[name]
		switch now, ok := after[name]; {
		case !ok:
			return name, "took away", name + " taken away", check.Passed("")
		case now.value != was.value || now.ttl < was.ttl-time.Millisecond:
			return name, "changed", name + " changed", check.Passed("")
		}
	}
	return "", "", "", check.Passed("")
}

// WriterLeaves checks that a write invalidates even when its visitor
// leaves: the old price is cached; shop-1's write runs, and its visitor
// hangs up (its context is cancelled) while the transaction commits, as a
// client does that times out. The commit stands, so a visitor after the
// write returned must get the new price. It catches the delete after the
// commit sent on the writer's own context.
func WriterLeaves(h *harness.H, newShop NewShop) check.Verdict {
	v := writerLeaves(h, newShop, false)
	if !v.Pass {
		return v
	}
	w := writerLeaves(h, newShop, true)
	if w.Skipped { // a write whose database call took the passed deadline: nothing committed to stage
		return v
	}
	if !w.Pass {
		return w
	}
	stalled := stalledDetached(h, newShop, writeDelete)
	if !stalled.Pass {
		return stalled
	}
	return check.Passed(v.Figure + "; " + w.Figure + "; " + stalled.Figure)
}

// writerLeaves is one scene of WriterLeaves: the writer's visitor hangs up
// at the commit, or, with deadline, its deadline passes there
// (harness.DeadlineAt). The second catches a delete detached from the
// visitor's context only when that context was cancelled
// (c10-write-detach-only-if-canceled): a request out of time ends with
// context.DeadlineExceeded, and a delete sent on it fails at once.
func writerLeaves(h *harness.H, newShop NewShop, deadline bool) check.Verdict {
	s, err := newScene(h, newShop, 2, fleet.HoldCalls(), fleet.HoldCalls())
	if err != nil {
		return fleet.Unreachable(err)
	}
	defer s.Close()
	if v := s.warm(1); !v.Pass {
		return v
	}
	var leave atomic.Pointer[func()]
	s.commits.Then = func(context.Context, string) error {
		if end := leave.Load(); end != nil {
			(*end)() // the client hangs up, or time runs out; the transaction commits all the same
		}
		return nil
	}
	shop := s.shops[0]
	w := s.visit(1, func(ctx context.Context) (int, error) {
		var end func()
		if deadline {
			ctx, end = harness.DeadlineAt(ctx, s.Clock.Now())
		} else {
			var cancel context.CancelFunc
			ctx, cancel = context.WithCancel(ctx)
			defer cancel()
			end = cancel
		}
		leave.Store(&end)
		return newPrice, shop.SetPrice(ctx, book, newPrice)
	})
	if err := s.Drive(w.Done, patience); err != nil {
		return waitVerdict(err, "shop-1's write, whose visitor left, was")
	}
	if o := w.Outcomes()[0]; o.Panic != "" {
		return check.Failed("", "shop-1's write panicked: "+o.Panic)
	}
	if truth := s.Truth(); truth.Price != newPrice {
		return check.Skipped("not staged: shop-1's write did not commit")
	}
	held := s.Cached()
	scene, how := "the writer left during its commit", "its visitor hung up as the commit returned (its context was cancelled)"
	if deadline {
		scene, how = "the writer's deadline passed during its commit", "its visitor's deadline passed as the commit "+
			"returned (its context ended with context.DeadlineExceeded)"
	}
	return s.served(scene, func(got int) string {
		return fmt.Sprintf("shop-1's write committed %s, and %s; then a visitor on another instance got %s: the "+
			"delete after the commit never reached Redis. A commit stands whatever the client does after it, and "+
			"whatever its deadline says: send the delete on a context of its own, always (context.WithoutCancel, "+
			"with a short deadline on the clock New is given), or the old price stays for its whole time to live. "+
			"Redis held after the write: %s", cents(newPrice), how, cents(got), held)
	})
}

// ConflictBudget checks that refused fills do not escape the visitor's
// budget. Every read of the row takes a healthy read's time, and while its
// reply is on its way a write on shop-2 commits and finishes, so that the
// fill is refused; this goes on for conflicts reads (12 s). Shop-1's visitor must
// return, with the price or an error, within conflictWithin of the shops'
// clock. It catches a refused fill that reads again without looking at the
// budget, and a budget that starts again with every try.
func ConflictBudget(h *harness.H, newShop NewShop) check.Verdict {
	reads := fleet.HoldCalls()
	s, err := newScene(h, newShop, 2, reads, fleet.HoldCalls())
	if err != nil {
		return fleet.Unreachable(err)
	}
	defer s.Close()
	var overtaken atomic.Int64
	var writeErr atomic.Value
	var over atomic.Bool // set once shop-1's visitor is back: no more writes
	// Set before any visitor comes, so every read sees it.
	slow := fleet.Slow(s.Clock, rebuild)
	reads.Then = func(ctx context.Context, b string) error {
		if err := slow(ctx, b); err != nil {
			return err
		}
		n := overtaken.Add(1)
		if n > int64(conflicts) || over.Load() {
			return nil
		}
		if err := s.shops[1].SetPrice(ctx, book, newPrice+int(n)); err != nil {
			writeErr.CompareAndSwap(nil, err)
		}
		return nil
	}
	began := s.Clock.Now()
	r := s.Read(0)
	err = s.Drive(r.Done, conflictWithin)
	if e, ok := writeErr.Load().(error); ok {
		return check.Failed("", fmt.Sprintf("shop-2's write, during shop-1's read, got an error: %v", e))
	}
	figure := fmt.Sprintf("%s in %v", fleet.Count(s.RowReads(), "read"), s.Clock.Now().Sub(began).Round(time.Millisecond))
	if errors.Is(err, fleet.ErrNoBound) {
		return check.Failed(figure, fmt.Sprintf("a write committed during each of shop-1's reads of the row, so that each "+
			"fill was refused; shop-1's visitor was still reading after %v of the shops' clock (%s). A budget must hold "+
			"on every path: after a refused fill, look at the deadline before reading again, and past it return an "+
			"error that says to try again. The deadline is set once, when the visitor comes", conflictWithin,
			fleet.Count(s.RowReads(), "read")))
	}
	if err != nil {
		return stuckVerdict(err)
	}
	o := r.Outcomes()[0]
	if o.Panic != "" {
		return check.Failed(figure, "shop-1's visitor's call panicked: "+o.Panic)
	}
	once := s.RowReads() == 1
	if o.Err == nil && once {
		over.Store(true)
		if v, stored := s.storedFill(); stored {
			return v
		}
	}
	if once {
		return check.Passed(figure + ": its fill was refused, and it served what it read without reading again")
	}
	return check.Passed(figure + ", every fill refused by a write")
}

// storedFill tells whether the one fill of ConflictBudget's visitor was
// stored although a write committed during its read: a visitor on a new
// instance is served without reading the row. Then no fill was refused,
// the scene the check is about did not happen, and its verdict is a skip
// (stale-set judges that store); the second return is false when the
// fill was not stored.
func (s *scene) storedFill() (check.Verdict, bool) {
	before := s.RowReads()
	o, err := s.Fresh()
	if err != nil {
		return stuckVerdict(err), true
	}
	if o.Err != nil || s.RowReads() != before {
		return check.Verdict{}, false
	}
	return check.Skipped(fmt.Sprintf("not staged: shop-1 stored the price it read although a write committed "+
		"during the read (a visitor on a new instance was served %s without reading the row), so no fill was "+
		"refused and the budget after a refusal was not tried; stale-set judges that store", cents(o.Value))), true
}

// secondLookInfo is the check that a filler whose second look finds the
// price lets its lease go.
var secondLookInfo = check.Info{
	ID: "second-look-lets-go",
	Name: "a filler whose second look finds the price lets its lease go: when the price is then evicted, the " +
		"next visitor reads the row at once",
	Catches: "a lease left to expire after a second look that found the price (wrong/secondlook-keeps-lease, the " +
		"reference until the lab's issue 25): nobody fills under it, and once the price is evicted the fleet " +
		"waits out its time to live",
}

// SecondLookLetsGo checks that a filler whose second look finds the price
// ends the lease it took for it. Shop-1's visitor misses, and its first
// command that may take a lease is held on its way; meanwhile shop-2's
// visitor misses, takes the lease, reads the row and stores the price.
// Then shop-1's command goes: it takes the lease afresh, and its second
// look finds the price. Any key it leaves behind is what this check is
// about: the checker evicts every key shop-2's fill left (the price), as
// Redis under maxmemory may, and shop-2's next visitor must get the price
// within a healthy read. A shop that takes no lease with a SET NX or a
// script, or leaves nothing behind, is not staged (SKIP or PASS).
func SecondLookLetsGo(h *harness.H, newShop NewShop) check.Verdict {
	s, err := newScene(h, newShop, 2, fleet.HoldCalls(), fleet.HoldCalls())
	if err != nil {
		return fleet.Unreachable(err)
	}
	defer s.Close()
	ctx := h.Context()
	stop := s.taps[0].Hold(func(c fleet.Command) bool { return c.Conditional() })
	defer stop.Release()
	first := s.Read(0)
	if err := s.Drive(func() bool { return stop.Reached() || first.Done() }, patience); err != nil {
		return waitVerdict(err, "shop-1's visitor, with Redis empty, was")
	}
	if !stop.Reached() {
		return check.Skipped("not staged: shop-1's visitor sent no command that may take a lease (a SET NX or a " +
			"script) before it returned, so there was no second look to make (lease-coalesces judges a fleet " +
			"without a lease)")
	}
	filler := s.Read(1)
	if err := s.Drive(filler.Done, patience); err != nil {
		return waitVerdict(err, "shop-2's visitor, while shop-1's lease was on its way, was")
	}
	if o := filler.Outcomes()[0]; o.Err != nil || o.Value != oldPrice {
		return check.Failed("", "shop-2's visitor, with Redis empty, got "+describe(o))
	}
	keys, err := s.World.Keys(ctx)
	if err != nil {
		return fleet.Unreachable(err)
	}
	filled := map[string]bool{}
	for _, k := range keys {
		filled[k.Name] = true
	}
	reads := s.RowReads()
	stop.Release()
	if err := s.Drive(first.Done, patience); err != nil {
		return waitVerdict(err, "shop-1's visitor, after shop-2 had stored the price, was")
	}
	if o := first.Outcomes()[0]; o.Err != nil || o.Value != oldPrice {
		return check.Failed("", "shop-1's visitor, after shop-2 had stored the price, got "+describe(o))
	}
	if s.RowReads() > reads {
		return check.Skipped("not staged: shop-1 read the row again after taking the lease, with the price " +
			"already in Redis (no second look), so there was no second look to judge")
	}
	keys, err = s.World.Keys(ctx)
	if err != nil {
		return fleet.Unreachable(err)
	}
	var left []string
	for _, k := range keys {
		if !filled[k.Name] {
			left = append(left, k.String())
		}
	}
	if len(left) == 0 {
		return check.Passed("shop-1's second look found the price, and it left nothing behind")
	}
	for name := range filled {
		if err := s.World.Delete(ctx, name); err != nil {
			return fleet.Unreachable(err)
		}
	}
	next := s.Read(1)
	err = s.Drive(next.Done, letGoWithin)
	if errors.Is(err, fleet.ErrNoBound) {
		return check.Failed(fmt.Sprintf("still waiting after %v", letGoWithin), fmt.Sprintf("shop-1's visitor took "+
			"a lease just after shop-2 had stored the price, and its second look found the price; it returned and "+
			"left %s. Then Redis evicted the price, as it may under maxmemory, and shop-2's next visitor was still "+
			"waiting after %v of the shops' clock, with nobody reading the row. A lease that nobody will fill under "+
			"is let go at once (a delete that checks the token), on every path that does not fill: the second "+
			"look's hit too", strings.Join(left, ", "), letGoWithin))
	}
	if err != nil {
		return stuckVerdict(err)
	}
	if o := next.Outcomes()[0]; o.Err != nil || o.Value != oldPrice {
		return check.Failed("", fmt.Sprintf("after the price was evicted, with %s left by shop-1's second look, "+
			"shop-2's next visitor got %s", strings.Join(left, ", "), describe(o)))
	}
	return check.Passed(fmt.Sprintf("shop-1's second look left %s, and the next visitor read at once after an "+
		"eviction", strings.Join(left, ", ")))
}

// leads are the head starts joinAsLastLeaves plays: the reference's
// newcomer meets the leaver's count at 4 (8 ms a play).
var leads = []int{0, 1, 2, 3, 4, 5, 6, 7, 8}

// joinAsLastLeaves is LetGo's scene of a visitor who comes for a book as
// the last visitor of its fill leaves: shop-1's visitor misses, takes the
// lease and reads the row, held there; then, taking turns one statement
// each, it leaves and a second visitor on shop-1 comes. Either the second
// joins the fill before the first has left it, and the fill goes on for
// it, or it finds the fill ended and starts one of its own: both are
// right, and it must get the price either way. It catches a flight whose
// visitors join under the instance's lock and leave under the flight's
// own, taking the two in opposite orders (the two deadlock:
// wrong/flight-lock-order), and a visitor counted in a step after the one
// that found its flight, which the last visitor ends in between
// (wrong/enlist-after-join): it waits on a fill nobody reads for, and
// gets its error, since the clock has not moved since the fill began (a
// coarse clock's reading often has not: the reference's retry of a fill
// that began before the visitor came cannot save it). The two
// take turns with the first of them (either) lead steps ahead: the steps
// that matter lie deeper in one's code than in the other's, by a few
// statements that differ from answer to answer. A newcomer who looks in
// Redis before it looks for a fill would fall behind by a round trip, so
// it comes first and its first command's answer is held on its way back
// (Tap.HoldReply), and let go as the first visitor leaves; one who sends
// nothing before it waits came too early to be the scene's, and comes
// again, in a scene of its own, as the first leaves.
func joinAsLastLeaves(h *harness.H, newShop NewShop, reverse bool, lead int) check.Verdict {
	v, looked := joinAsLeaving(h, newShop, reverse, lead, true)
	if v.Pass && !looked {
		v, _ = joinAsLeaving(h, newShop, reverse, lead, false)
	}
	return v
}

// joinAsLeaving plays joinAsLastLeaves: with look set, the newcomer comes
// before the turns begin and its first command's answer is held, and
// looked says whether it sent one; without, it comes as the turns begin.
func joinAsLeaving(h *harness.H, newShop NewShop, reverse bool, lead int, look bool) (v check.Verdict, looked bool) {
	s, err := newScene(h, newShop, 2, fleet.HoldCalls(1), fleet.HoldCalls())
	if err != nil {
		return fleet.Unreachable(err), true
	}
	defer s.Close()
	r, leave, v := s.fillerReading()
	defer leave()
	if !v.Pass {
		return v, true
	}
	var r2 *harness.Crowd[int]
	var first *fleet.Hold
	if look {
		first = s.taps[0].HoldReply(func(fleet.Command) bool { return true })
		r2 = s.Read(0)
		if err := s.Settle(); err != nil {
			return stuckVerdict(err), true
		}
		if !first.Reached() {
			s.taps[0].Disarm()
			return check.Passed(""), false
		}
	}
	v = h.Under(point.LockstepAfter(reverse, lead), func() check.Verdict {
		leave()
		if look {
			first.Release()
		} else {
			r2 = s.Read(0)
		}
		if err := s.Drive(r.Done, patience); err != nil {
			return waitVerdict(err, "shop-1's first visitor, after it left as a second visitor came for the same book, was")
		}
		return check.Passed("")
	})
	if !v.Pass {
		return v, true
	}
	s.reads.Gate(1).Open()
	if err := s.Drive(r2.Done, patience); err != nil {
		return waitVerdict(err, "shop-1's second visitor, who came as the first left its fill, was"), true
	}
	if o := r2.Outcomes()[0]; o.Panic != "" || o.Err != nil || o.Value != oldPrice {
		return check.Failed("", fmt.Sprintf("shop-1's visitor took the lease and read the row; a second visitor came "+
			"for the book on shop-1 as the first one left, and got %s, with nothing wrong anywhere: the price was %s. "+
			"A visitor who finds a fill on must count itself among its visitors in the same critical section that "+
			"found it, or the last visitor may end the fill in between; and a visitor who finds it ended starts one "+
			"of its own", describe(o), cents(oldPrice))), true
	}
	return check.Passed(""), true
}
