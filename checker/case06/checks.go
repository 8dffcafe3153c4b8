package case06

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"stampede/checker/check"
	"stampede/checker/fleet"
	"stampede/checker/harness"
	"stampede/checker/shelves"
	"stampede/shop/catalog"
)

// The scenes' sizes and bounds.
const (
	instances   = 4  // shop instances in a burst
	perInstance = 25 // visitors of each instance in a burst
	// patience is how far the checker moves the shops' clock for a wait
	// that should end by itself.
	patience = 30 * time.Second
	// maxBudget is the longest a loser may wait for a fill before it
	// answers "try again".
	maxBudget = 10 * time.Second
	// maxLockTTL is the longest lock the checker accepts: a holder that
	// dies blocks the shelf for that long, for a rebuild of 0.2 s.
	maxLockTTL = 10 * time.Second
	// rebuild is how long, on the shops' clock, a holder's query takes in
	// the scenes that let it run: the shop's 0.2 s.
	rebuild = catalog.QueryCost
)

// FleetOnce checks that a burst on every instance makes one source read,
// and that an instance whose lock attempt lands just after the holder's
// release does not read again. It catches the in-process single-flight
// alone (one read per instance), losers that read anyway, and a holder
// that does not look in Redis again once it has the lock.
func FleetOnce(h *harness.H, newShop NewShop) check.Verdict {
	g, gate := holdEvery()
	f, err := newFleet(h, newShop, instances, g)
	if err != nil {
		return fleet.Unreachable(err)
	}
	defer f.Close()
	crowd := f.Burst(perInstance)
	if err := f.Settle(); err != nil {
		return stuckVerdict(err)
	}
	gate.Open()
	err = f.Drive(crowd.Done, patience)
	reads := f.Reads()
	figure := fmt.Sprintf("%s for %d instances x %d visitors", count(reads, "read"), instances, perInstance)
	if !f.World.Embedded() {
		figure += ", on " + f.World.Describe(h.Context())
	}
	if err != nil {
		return waitVerdict(err, "the burst's visitors were")
	}
	if p := crowd.Panicked(); p != "" {
		return check.Failed(figure, "a visitor's call panicked: "+p)
	}
	switch {
	case reads > instances:
		return check.Failed(figure, fmt.Sprintf("the fleet read the source %d times for one burst: coalesce each instance's "+
			"visitors into one flight, and let the flights share one lock in Redis", reads))
	case reads > 1:
		return check.Failed(figure, fmt.Sprintf("the fleet read the source %d times for one burst, up to one per instance: "+
			"the instances must share one lock in Redis, so that one of them rebuilds and the others wait for its fill", reads))
	}
	if v := shelves.AllGot(crowd.Outcomes(), catalog.Books(catalog.Bestsellers)); !v.Pass {
		return check.Failed(figure, v.Message)
	}
	if reads == 0 {
		return check.Failed(figure, "the list must come from the database, once")
	}
	if v := lateAttempt(h, newShop); !v.Pass {
		return v
	}
	for k := 1; k <= maxCommands; k++ {
		v, more := fillGap(h, newShop, k)
		if !v.Pass {
			return v
		}
		if !more {
			break
		}
	}
	return check.Passed(figure)
}

// maxCommands is how many of a holder's commands after its query the
// checker stops it before, one scene each.
const maxCommands = 12

// fillGap is the third scene of FleetOnce: shop-1's query returns, and the
// checker stops shop-1 before its k-th command after it, while a visitor
// of shop-2 misses and the shops' clock runs for a rebuild. Wherever
// shop-1 is stopped, shop-2 must find the lock or the fill, and the fleet
// must read once. It catches a holder that releases the lock before it
// writes the shelf. It reports false once shop-1 sends fewer commands.
func fillGap(h *harness.H, newShop NewShop, k int) (check.Verdict, bool) {
	g, gts := holdNth(1)
	f, err := newFleet(h, newShop, 2, g)
	if err != nil {
		return fleet.Unreachable(err), false
	}
	defer f.Close()
	a := f.Visit(0, 1)
	if err := f.Settle(); err != nil {
		return stuckVerdict(err), false
	}
	since := len(f.taps[0].Log())
	hold := f.taps[0].Hold(fleet.Nth(k))
	defer hold.Release()
	gts[0].Open()
	if err := f.Drive(func() bool { return hold.Reached() || a.Done() }, patience); err != nil {
		return waitVerdict(err, "shop-1's visitor was"), false
	}
	if !hold.Reached() {
		return check.Passed(""), false
	}
	present, err := f.World.Keys(h.Context())
	if err != nil {
		return fleet.Unreachable(err), false
	}
	f.Keep = present // shop-1 is paused, not dead: what it wrote stays as it left it
	b := f.Visit(1, 1)
	if err := f.Elapse(rebuild); err != nil {
		return stuckVerdict(err), false
	}
	hold.Release()
	if err := f.Drive(func() bool { return a.Done() && b.Done() }, patience); err != nil {
		return waitVerdict(err, "the visitors were"), false
	}
	reads := f.Reads()
	if reads > 1 {
		var sent []string
		for _, c := range f.taps[0].Log()[since:] {
			if len(c.Keys) > 0 || !c.Known {
				sent = append(sent, shorten(c.String()))
			}
		}
		figure := fmt.Sprintf("%s with shop-1 stopped before its command %d after its query", count(reads, "read"), k)
		if locks, err := learnLocks(f); err == nil && slices.ContainsFunc(present, func(k fleet.Key) bool { return locks[k.Name] }) {
			return check.Failed(figure, fmt.Sprintf("shop-1 still held the lock, stopped after its query, while %v of the "+
				"shops' clock passed; shop-2 missed meanwhile and read the source too. A loser waits for the holder's fill "+
				"within its budget (a second or so), and keeps waiting while the lock is held", rebuild)), false
		}
		return check.Failed(figure,
			fmt.Sprintf("shop-1 read the source and was stopped before its command %d after the query (it sent: %s); shop-2 "+
				"missed meanwhile, found no lock to wait for, and read the source again. Write the shelf to Redis first, "+
				"and release the lock after", k, strings.Join(sent[:min(k, len(sent))], " | "))), false
	}
	return check.Passed(""), true
}

// lateAttempt is the second scene of FleetOnce: shop-2 misses while
// shop-1 holds the lock, and its lock attempt is held until shop-1 has
// filled the shelf and released the lock. Shop-2 then wins the lock, and
// must find the fill instead of reading again.
func lateAttempt(h *harness.H, newShop NewShop) check.Verdict {
	g, gts := holdNth(1)
	f, err := newFleet(h, newShop, 2, g)
	if err != nil {
		return fleet.Unreachable(err)
	}
	defer f.Close()
	a := f.Visit(0, 1)
	if err := f.Settle(); err != nil {
		return stuckVerdict(err)
	}
	locks, v := lockKeys(f, "shop-1's")
	if !v.Pass {
		return v
	}
	hold := f.taps[1].Hold(fleet.AttemptOn(names(locks)))
	defer hold.Release()
	b := f.Visit(1, 1)
	if err := f.Settle(); err != nil {
		return stuckVerdict(err)
	}
	gts[0].Open()
	if err := f.Drive(a.Done, patience); err != nil {
		return waitVerdict(err, "shop-1's visitor was")
	}
	reached := hold.Reached()
	hold.Release()
	if err := f.Drive(b.Done, patience); err != nil {
		return waitVerdict(err, "shop-2's visitor was")
	}
	reads := f.Reads()
	figure := fmt.Sprintf("%s with a late lock attempt", count(reads, "read"))
	if p := b.Panicked(); p != "" {
		return check.Failed(figure, "a visitor's call panicked: "+p)
	}
	if reads > 1 && reached {
		return check.Failed(figure, "shop-2 missed while shop-1 rebuilt, and its lock attempt came just after shop-1 "+
			"had filled the shelf and released the lock: shop-2 won the lock and read the source again. "+
			"Once you hold the lock, look in Redis again before reading the source")
	}
	if reads > 1 {
		return check.Failed(figure, "shop-2 read the source although shop-1 had just filled the shelf")
	}
	return shelves.AllGot(b.Outcomes(), catalog.Books(catalog.Bestsellers))
}

// PerInstance checks that each instance makes at most one lock attempt in
// a burst: the in-process single-flight stays in front of the lock. It
// catches a lock taken by every visitor instead of by each instance.
func PerInstance(h *harness.H, newShop NewShop) check.Verdict {
	g, _ := holdEvery()
	f, err := newFleet(h, newShop, instances, g)
	if err != nil {
		return fleet.Unreachable(err)
	}
	defer f.Close()
	f.Burst(perInstance)
	if err := f.Settle(); err != nil {
		return stuckVerdict(err)
	}
	locks, v := lockKeys(f, "the holder's")
	if !v.Pass {
		return v
	}
	counts := make([]string, len(f.taps))
	worst, who, example := 0, 0, ""
	for i, t := range f.taps {
		n := 0
		for _, c := range t.Log() {
			if c.Attempt(names(locks)) {
				n++
				if example == "" {
					example = c.String()
				}
			}
		}
		counts[i] = fmt.Sprint(n)
		if n > worst {
			worst, who = n, i
		}
	}
	figure := "lock attempts per instance: " + strings.Join(counts, ", ")
	if worst > 1 {
		return check.Failed(figure, fmt.Sprintf("shop-%d sent %d lock attempts (such as %q) for its %d visitors: "+
			"each visitor went for the lock itself. Keep the in-process single-flight in front of the lock, "+
			"so that an instance's one flight takes it for all its visitors", who+1, worst, example, perInstance))
	}
	return check.Passed(figure)
}

// LosersWait checks that instances that lose the lock do not read the
// source, and that their visitors are served by the holder's fill. It
// catches losers that read anyway and losers that give up at once.
func LosersWait(h *harness.H, newShop NewShop) check.Verdict {
	g, gate := holdEvery()
	f, err := newFleet(h, newShop, instances, g)
	if err != nil {
		return fleet.Unreachable(err)
	}
	defer f.Close()
	first := f.Visit(0, 1)
	if err := f.Settle(); err != nil {
		return stuckVerdict(err)
	}
	if f.Reads() == 0 {
		return check.Failed("", "shop-1's visitor never reached the database: "+strings.Join(f.Places(), "; "))
	}
	locks, v := lockKeys(f, "shop-1's")
	if !v.Pass {
		return v
	}
	f.Keep = locks // shop-1 is slow, not dead: its lock lives while the others are driven
	var losers []*harness.Crowd[[]string]
	for i := 1; i < instances; i++ {
		losers = append(losers, f.Visit(i, 10))
	}
	// The rebuild takes its time: the shops' clock, and Redis's, move on
	// while shop-1's query is held, and the losers poll, retry or give up.
	if err := f.Elapse(rebuild); err != nil {
		return stuckVerdict(err)
	}
	gate.Open()
	err = f.Drive(func() bool { return first.Done() && allDone(losers) }, patience)
	reads := f.Reads()
	figure := fmt.Sprintf("%s while shop-1 held the lock for a %v rebuild", count(reads, "read"), rebuild)
	if reads > 1 {
		return check.Failed(figure, fmt.Sprintf("%d more reads while shop-1 held the lock and rebuilt: a loser waits "+
			"for the holder's fill (polling Redis, within a budget) or serves the previous value, it never queries", reads-1))
	}
	if err != nil {
		return waitVerdict(err, "the losers' visitors were")
	}
	var outs []harness.Outcome[[]string]
	for _, c := range losers {
		outs = append(outs, c.Outcomes()...)
	}
	if v := shelves.AllGot(outs, catalog.Books(catalog.Bestsellers)); !v.Pass {
		return check.Failed(figure, fmt.Sprintf("a visitor of a losing instance should get the holder's fill, which came "+
			"after a rebuild of %v (a budget must outlast a healthy rebuild): %s", rebuild, v.Message))
	}
	return check.Passed(fmt.Sprintf("%s; its fill served %d waiting visitors", figure, len(outs)))
}

// LockExpires checks that a holder that dies mid-rebuild leaves a lock that
// expires, and that another instance rebuilds once it has. Shop-1 takes
// the lock and its query is held; then it dies: the query never returns,
// whatever its deadline, and no command of shop-1 reaches Redis again
// (each fails as on a dropped connection), its release and any watchdog's
// extension alike. It catches a lock with no time to live, and losers who
// keep a dead holder's lock alive.
func LockExpires(h *harness.H, newShop NewShop) check.Verdict {
	f, err := newFleet(h, newShop, 2, holdDead())
	if err != nil {
		return fleet.Unreachable(err)
	}
	defer f.Close()
	f.Visit(0, 1)
	if err := f.Settle(); err != nil {
		return stuckVerdict(err)
	}
	locks, v := lockKeys(f, "shop-1's")
	if !v.Pass {
		return v
	}
	// Shop-1 has died: from now on nothing it sends reaches Redis.
	f.Tap(0).Fail(func(fleet.Command) bool { return true }, ErrConnection, -1)
	var longest time.Duration
	for _, k := range locks {
		if k.Forever {
			return check.Failed(k.String(), fmt.Sprintf("the lock %s has no time to live: when its holder dies mid-rebuild, "+
				"no instance can ever rebuild the shelf again. Take it with SET ... NX PX, in one command", k.Name))
		}
		longest = max(longest, k.TTL)
	}
	if longest > maxLockTTL {
		return check.Failed(fmt.Sprintf("lock for %v", longest), fmt.Sprintf("a holder that dies blocks the shelf for the "+
			"lock's whole time to live; for a rebuild of %v keep it within %v", catalog.QueryCost, maxLockTTL))
	}
	// While the dead holder's lock lives, shop-2's visitors come one after
	// another: they may wait and give up, but must not keep it alive.
	start := f.Clock.Now()
	var next *harness.Crowd[[]string]
	for f.Reads() == 1 && f.Clock.Now().Sub(start) <= longest {
		before := f.Clock.Now()
		next = f.Visit(1, 1)
		if err := f.Drive(next.Done, patience); err != nil {
			return waitVerdict(err, "while shop-1's dead lock lived, shop-2's visitor was")
		}
		if p := next.Panicked(); p != "" {
			return check.Failed("", "a visitor's call panicked: "+p)
		}
		if f.Clock.Now().Equal(before) {
			if err := f.Elapse(50 * time.Millisecond); err != nil {
				return stuckVerdict(err)
			}
		}
	}
	if f.Reads() == 1 {
		alive, err := f.World.Keys(h.Context())
		if err != nil {
			return fleet.Unreachable(err)
		}
		for _, k := range alive {
			if slices.ContainsFunc(locks, func(l fleet.Key) bool { return l.Name == k.Name }) {
				return check.Failed(fmt.Sprintf("lock for %v, still there after %v", longest, f.Clock.Now().Sub(start).Round(time.Millisecond)),
					fmt.Sprintf("shop-1 died holding %s, which had %v to live; %v later it was still there, with %v left: "+
						"something kept pushing its expiry back (sent: %s). Only a live holder may extend its lock, and not forever",
						k.Name, longest, f.Clock.Now().Sub(start).Round(time.Millisecond), k.TTL.Round(time.Millisecond), expiries(f)))
			}
		}
		next = f.Visit(1, 1)
		err = f.Drive(next.Done, patience)
	}
	reads := f.Reads()
	figure := fmt.Sprintf("lock for %v; %s", longest, count(reads, "read"))
	if err != nil {
		return waitVerdict(err, "after the lock had expired, shop-2's visitor was")
	}
	o := next.Outcomes()[0]
	switch {
	case o.Panic != "":
		return check.Failed(figure, "a visitor's call panicked: "+o.Panic)
	case o.Err != nil:
		return check.Failed(figure, fmt.Sprintf("shop-1 died holding the lock; once it had expired, shop-2's visitor got "+
			"an error (%v) instead of shop-2 taking the lock and rebuilding", o.Err))
	case reads != 2:
		return check.Failed(figure, "once the dead holder's lock had expired, the next instance should rebuild: one more read")
	}
	if v := shelves.AllGot(next.Outcomes(), catalog.Books(catalog.Bestsellers)); !v.Pass {
		return check.Failed(figure, v.Message)
	}
	return check.Passed(fmt.Sprintf("shop-1 died holding a lock for %v; after it, shop-2 rebuilt", longest))
}

// expiries lists the commands after which a key's expiry may have moved,
// for a message.
func expiries(f *Fleet) string {
	var out []string
	for i, t := range f.taps {
		for _, c := range t.Log() {
			if strings.Contains(c.Name, "expire") || c.Scripted() || c.Name == "set" && slices.ContainsFunc(c.Args, func(a string) bool {
				return strings.EqualFold(a, "xx") || strings.EqualFold(a, "keepttl")
			}) {
				out = append(out, fmt.Sprintf("shop-%d: %s", i+1, shorten(c.String())))
			}
		}
	}
	if len(out) == 0 {
		return "nothing that sets an expiry"
	}
	out = slices.Compact(out)
	return strings.Join(out[:min(3, len(out))], "; ")
}

// HolderOnly checks that a holder whose lock expired and was taken over
// leaves the new holder's lock alone. The takeover is staged before each
// command the holder sends after its query, one world per command, so
// that a release in two steps (read the token, then delete) is caught
// between them. It catches a release by plain DEL, a check-then-delete
// that is not atomic, and a token that is the same for every instance.
func HolderOnly(h *harness.H, newShop NewShop) check.Verdict {
	const most = maxCommands
	for k := 1; k <= most; k++ {
		v, more := takeover(h, newShop, k)
		if !v.Pass || !more {
			return v
		}
	}
	return check.Passed(fmt.Sprintf("shop-1's lock taken over before each of its first %d commands", most))
}

// takeover stages one takeover before shop-1's k-th command after its
// query returns. It reports false once shop-1 sends fewer commands.
func takeover(h *harness.H, newShop NewShop, k int) (check.Verdict, bool) {
	ctx := h.Context()
	g, gts := holdNth(1, 2)
	f, err := newFleet(h, newShop, 2, g)
	if err != nil {
		return fleet.Unreachable(err), false
	}
	defer f.Close()
	a := f.Visit(0, 1)
	if err := f.Settle(); err != nil {
		return stuckVerdict(err), false
	}
	locks, v := lockKeys(f, "shop-1's")
	if !v.Pass {
		return v, false
	}
	since := len(f.taps[0].Log())
	hold := f.taps[0].Hold(fleet.Nth(k))
	defer hold.Release()
	gts[0].Open()
	if err := f.Drive(func() bool { return hold.Reached() || a.Done() }, patience); err != nil {
		return waitVerdict(err, "shop-1's visitor was"), false
	}
	if !hold.Reached() {
		return check.Passed(fmt.Sprintf("shop-1's lock taken over before each of its %d commands after its query", k-1)), false
	}

	// Shop-1's lock expires, the shelf's copy in Redis is invalidated, and
	// shop-2 misses and takes the lock.
	if err := f.World.DeleteAll(ctx); err != nil {
		return fleet.Unreachable(err), false
	}
	f.Visit(1, 1)
	if err := f.Settle(); err != nil {
		return stuckVerdict(err), false
	}
	owned := map[string]string{}
	for _, l := range locks {
		val, ok, err := f.World.Get(ctx, l.Name)
		if err != nil {
			return fleet.Unreachable(err), false
		}
		if ok {
			owned[l.Name] = val
		}
	}
	if len(owned) == 0 { // shop-2 did not take it: another instance does
		owned[locks[0].Name] = "another-instance-" + strings.ToLower(rand.Text()[:8])
		if err := f.World.Set(ctx, locks[0].Name, owned[locks[0].Name], 2*time.Second); err != nil {
			return fleet.Unreachable(err), false
		}
	}

	hold.Release()
	if err := f.Drive(a.Done, patience); err != nil {
		return waitVerdict(err, "shop-1's visitor was"), false
	}
	figure := fmt.Sprintf("taken over before shop-1's command %d", k)
	if p := a.Panicked(); p != "" {
		return check.Failed(figure, "a visitor's call panicked: "+p), false
	}
	var sent []string
	for _, c := range f.taps[0].Log()[since:] {
		if len(c.Keys) > 0 {
			sent = append(sent, shorten(c.String()))
		}
	}
	for name, want := range owned {
		got, ok, err := f.World.Get(ctx, name)
		if err != nil {
			return fleet.Unreachable(err), false
		}
		if got == want {
			continue
		}
		what := "deleted"
		if ok {
			what = "overwrote"
		}
		return check.Failed(figure, fmt.Sprintf("shop-1's lock expired while it rebuilt and shop-2 took %s; then shop-1 %s "+
			"shop-2's lock. Shop-1 sent, after its query: %s. Release with one atomic compare-and-delete of your own random "+
			"token (a Lua script), never a plain DEL", name, what, strings.Join(sent, " | "))), false
	}
	return check.Passed(figure), true
}

// lockHeld starts a fleet of two in which shop-1's visitor holds the lock
// with its query held at the gate it returns, slow and not dead: the lock
// does not age. It returns a nil fleet and the verdict when the scene
// cannot be staged (a shop that takes no lock the checker can find).
func lockHeld(h *harness.H, newShop NewShop) (*Fleet, *harness.Gate, check.Verdict) {
	return lockHeldOf(h, newShop, 2)
}

// lockHeldOf is lockHeld with n instances.
func lockHeldOf(h *harness.H, newShop NewShop, n int) (*Fleet, *harness.Gate, check.Verdict) {
	g, held := holdNth(1)
	f, err := newFleet(h, newShop, n, g)
	if err != nil {
		return nil, nil, fleet.Unreachable(err)
	}
	f.Visit(0, 1)
	if err := f.Settle(); err != nil {
		f.Close()
		return nil, nil, stuckVerdict(err)
	}
	locks, v := lockKeys(f, "shop-1's")
	if !v.Pass {
		f.Close()
		return nil, nil, v
	}
	f.Keep = locks
	return f, held[0], check.Verdict{}
}

// BudgetError checks that a loser who waits past its budget gets a typed
// "try again" error, without reading the source. It catches a poll with no
// bound.
func BudgetError(h *harness.H, newShop NewShop) check.Verdict {
	f, _, v := lockHeld(h, newShop)
	if f == nil {
		return v
	}
	defer f.Close()
	loser := f.Visit(1, 1)
	if err := f.Settle(); err != nil {
		return stuckVerdict(err)
	}
	start := f.Clock.Now()
	err := f.Drive(loser.Done, maxBudget)
	waited := f.Clock.Now().Sub(start)
	if reads := f.Reads(); reads > 1 {
		return check.Failed(count(reads, "read"), fmt.Sprintf("shop-2's visitor read the source while shop-1 held the "+
			"lock (by %v of the shops' clock): a loser waits for the fill, and past its budget answers \"try again\"; "+
			"it never queries", f.Clock.Now().Sub(start).Round(time.Millisecond)))
	}
	if errors.Is(err, fleet.ErrNoBound) {
		return check.Failed(fmt.Sprintf("waiting after %v", maxBudget), fmt.Sprintf("shop-1 held the lock and never finished, "+
			"and shop-2's visitor was still waiting for the fill after %v of the shops' clock: give the wait a budget "+
			"(a second or so), and past it return a *TryAgain", maxBudget))
	}
	if err != nil {
		return stuckVerdict(err)
	}
	o := loser.Outcomes()[0]
	figure := fmt.Sprintf("gave up after %v", waited.Round(time.Millisecond))
	var later interface{ RetryAfter() time.Duration }
	switch {
	case o.Panic != "":
		return check.Failed(figure, "a visitor's call panicked: "+o.Panic)
	case o.Err == nil:
		return check.Failed(figure, fmt.Sprintf("shop-2's visitor got %q, though the shelf was never filled", o.Value))
	case !errors.As(o.Err, &later):
		return check.Failed(figure, fmt.Sprintf("shop-2's visitor got the error %q: a loser past its budget returns a "+
			"*TryAgain, which says when to try again (its RetryAfter method)", o.Err))
	case later.RetryAfter() <= 0:
		return check.Failed(figure, fmt.Sprintf("the *TryAgain says to try again in %v: say when", later.RetryAfter()))
	}
	return check.Passed(fmt.Sprintf("%s: %v", figure, o.Err))
}

// ComeBackInfo: the losers of one instance, refused together, are told
// to come back at different moments.
var ComeBackInfo = check.Info{ID: "come-back", Name: "visitors refused together are told different moments to come back (a jittered Retry-After)",
	Catches: "a fixed Retry-After, and one drawn once (per process, per instance, or per flight) and handed to every visitor it refuses; " +
		"and delays from a generator with a fixed seed (two processes hand out the same ones)",
	Apart: fleet.ComeBackApart}

// ComeBack checks that visitors refused together are not all told to come
// back at the same moment: while shop-1 holds the lock and never fills,
// fleet.ComeBackRefused visitors, half on shop-2 and half on shop-3, wait
// out their budget; their come-backs must be spread (fleet.ComeBacks), and
// the two instances must not hand out the same delays (fleet.ApartDraws).
// It catches a fixed Retry-After, a delay drawn once and shared by every
// visitor of one flight, a jitter too narrow to spread them, and a
// generator seeded alike in every instance. The grader plays it in two
// processes and compares their delays (fleet.ComeBackApart): one
// generator for the process with a fixed seed.
func ComeBack(h *harness.H, newShop NewShop) check.Verdict {
	f, _, v := lockHeldOf(h, newShop, 3)
	if f == nil {
		return v
	}
	defer f.Close()
	half := fleet.ComeBackRefused / 2
	losers := []*harness.Crowd[[]string]{f.Visit(1, half), f.Visit(2, half)}
	if err := f.Settle(); err != nil {
		return stuckVerdict(err)
	}
	err := f.Drive(func() bool { return fleet.AllDone(losers) }, maxBudget)
	if errors.Is(err, fleet.ErrNoBound) {
		return check.Failed(fmt.Sprintf("waiting after %v", maxBudget), fmt.Sprintf("shop-1 held the lock and never "+
			"finished, and the other instances' visitors were still waiting after %v of the shops' clock (see budget)", maxBudget))
	}
	if err != nil {
		return stuckVerdict(err)
	}
	if reads := f.Reads(); reads > 1 {
		return check.Failed(count(reads, "read"), "shop-2's and shop-3's visitors read the source while shop-1 held the lock, so "+
			"nobody was refused: a loser waits for the fill, and past its budget answers \"try again\" (see losers-wait)")
	}
	return fleet.ComeBackVerdict("shop-1 held the lock and never filled", losers[0], losers[1])
}

// EveryKeyExpires checks that every key the fleet writes to Redis has a
// time to live, both while the rebuild runs and after it. It catches a lock
// with no expiry, and a key written first and given its expiry in a second
// command.
func EveryKeyExpires(h *harness.H, newShop NewShop) check.Verdict {
	ctx := h.Context()
	g, gate := holdEvery()
	f, err := newFleet(h, newShop, 3, g)
	if err != nil {
		return fleet.Unreachable(err)
	}
	defer f.Close()
	untimedSeen := f.World.WatchTTLs(f.taps)
	crowd := f.Burst(5)
	if err := f.Settle(); err != nil {
		return stuckVerdict(err)
	}
	during, err := f.World.Keys(ctx)
	if err != nil {
		return fleet.Unreachable(err)
	}
	gate.Open()
	if err := f.Drive(crowd.Done, patience); err != nil {
		return waitVerdict(err, "the visitors were")
	}
	after, err := f.World.Keys(ctx)
	if err != nil {
		return fleet.Unreachable(err)
	}
	for _, u := range untimedSeen() {
		return check.Failed(u.Key+" with no time to live", fmt.Sprintf("shop-%d sent %q, and right after it %s had no "+
			"time to live: if the instance dies there, the key never expires (a lock that never expires blocks the fleet "+
			"for good). Write the key and its time to live in one step: SET ... PX, or one script, or MULTI/EXEC",
			u.Shop+1, u.Sent, u.Key))
	}
	seen := map[string]bool{}
	var figure []string
	for _, k := range append(during, after...) {
		if k.Forever {
			return check.Failed(k.String(), fmt.Sprintf("%s has no time to live: a key that never expires outlives "+
				"whoever wrote it, and a lock that never expires blocks the fleet for good", k.Name))
		}
		if !seen[k.Name] {
			seen[k.Name] = true
			figure = append(figure, k.String())
		}
	}
	if len(figure) == 0 {
		return check.Failed("no keys", "the fleet wrote nothing to Redis: the shelf should be shared there")
	}
	return check.Passed(strings.Join(figure, ", "))
}

// Busy runs visitors of three shelves on three instances, cold and then
// warm, so that the race detector sees every access to the shops' state.
func Busy(h *harness.H, newShop NewShop) check.Verdict {
	list := []string{catalog.Bestsellers, catalog.NewReleases, catalog.StaffPicks}
	for round := range 2 {
		f, err := newFleet(h, newShop, 3, holdNone())
		if err != nil {
			return fleet.Unreachable(err)
		}
		for wave := range 2 { // the first wave misses, the second hits
			crowd := harness.Visit(h, 45, func(ctx context.Context, i int) ([]string, error) {
				return f.shops[i%3].Top(ctx, list[(i/3+round+wave)%3])
			})
			f.crowds = append(f.crowds, crowd)
			if err := f.Drive(crowd.Done, patience); err != nil {
				f.Close()
				return waitVerdict(err, "the visitors were")
			}
			if p := crowd.Panicked(); p != "" {
				f.Close()
				return check.Failed("", "a visitor's call panicked: "+p)
			}
		}
		f.Close()
	}
	return check.Passed("")
}

func names(keys []fleet.Key) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = k.Name
	}
	return out
}

func allDone(crowds []*harness.Crowd[[]string]) bool {
	for _, c := range crowds {
		if !c.Done() {
			return false
		}
	}
	return true
}

// waitVerdict fails a check whose visitors did not finish.
func waitVerdict(err error, who string) check.Verdict {
	if errors.Is(err, fleet.ErrNoBound) {
		return check.Failed("", fmt.Sprintf("%s still waiting after %v of the shops' clock", who, patience))
	}
	return stuckVerdict(err)
}

// count says "1 read" or "3 reads".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// shorten cuts a long command (a script's text) for a message.
func shorten(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 90 {
		return s[:87] + "..."
	}
	return s
}
