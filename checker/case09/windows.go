package case09

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"stampede/checker/case06"
	"stampede/checker/check"
	"stampede/checker/fleet"
	"stampede/checker/harness"
	"stampede/checker/point"
	"stampede/shop/catalog"
)

// The checks in this file each hold one window of the refresh path open
// with a gate or a held command, where the hand-built scenes of checks.go
// pass through it at once: a failed rebuild followed by a healthy one, two
// shelves stale on one instance, a delete while a rebuild holds the lock,
// a rebuild that outlives its lock, and a rebuild that lands between
// another instance's look and its lock.

// noRebuild is the verdict of a check whose window opens on a rebuild,
// when shop-1's stale reader set none going: a stale value starts its
// rebuild (the bounded check), and without one the check's scene never
// happened. The shop kept it from happening, so the check fails, and says
// so, rather than pass what it never saw.
func noRebuild(sc *scene, window string) check.Verdict {
	return check.Failed("no rebuild", fmt.Sprintf("at %s shop-1's reader found the list stale, and no rebuild read the "+
		"source: a stale value starts its rebuild (see bounded), and with none there was no %s", sc.at(stale), window))
}

// panicLockLife is the longest lock a rebuild that panicked may leave to
// its time to live: case 6's longest accepted lock (a lock sized for the
// slowest rebuild, right/early's 8 s, needs no renewal).
const panicLockLife = 10 * time.Second

// afterFailure is how long after a failed rebuild the next stale reader
// comes, with the source back: longer than any lock a failed rebuild may
// leave to its time to live (case 6's 2 s), inside the grace window.
const afterFailure = 5 * time.Second

// RetryAfterFailure checks that a rebuild that failed does not stop the
// next one on its instance: the source fails at the expiry, a stale reader
// of shop-1 sets a rebuild going, which fails; the source comes back, and
// the next stale reader of shop-1 must see a rebuild start. It catches an
// in-process "refresh running" mark that is cleared when a rebuild lands
// and not when it fails, after which the instance never rebuilds the
// shelf again.
func RetryAfterFailure(h *harness.H, newShop NewShop) check.Verdict {
	figure, v := retryAfterFault(h, newShop, false)
	if !v.Pass {
		return v
	}
	for _, scene := range []func(*harness.H, NewShop) check.Verdict{retryAfterEarlyLanding, retryAfterCrossedLeave} {
		v := scene(h, newShop)
		if !v.Pass {
			return v
		}
		if v.Figure != "" {
			figure += "; " + v.Figure
		}
	}
	panicked, v := retryAfterFault(h, newShop, true)
	if !v.Pass {
		return v
	}
	return check.Passed(figure + "; " + panicked)
}

// retryAfterFault is RetryAfterFailure's scene of a rebuild that failed:
// its query returns an error, or, with panics, panics (a driver's bug),
// which a rebuild's goroutine recovers. The panic catches a mark of a
// running rebuild cleared by a plain statement after the rebuild, not a
// defer (c09-refresh-flag-not-cleared-on-panic): the panic unwinds past
// it, and the instance never rebuilds the shelf again.
func retryAfterFault(h *harness.H, newShop NewShop, panics bool) (string, check.Verdict) {
	sc, fail := filledScene(h, newShop, 1)
	if sc == nil {
		return "", fail
	}
	defer sc.Close()
	what, failedHow := "failed", "failed read"
	if panics {
		what, failedHow = "panicked", "read that panicked"
		sc.db.Panic("driver: bad connection state (planned by the checker)")
	} else {
		sc.db.Fail(errPrimaryDown)
	}
	if err := sc.until(stale); err != nil {
		return "", case06.StuckVerdict(err)
	}
	first := sc.visit(0, 1)
	if err := sc.Drive(first.Done, case06.Patience); err != nil {
		return "", case06.WaitVerdict(err, "the reader of the stale list, with the source down, was")
	}
	if err := sc.settled(); err != nil {
		return "", case06.StuckVerdict(err)
	}
	failed := sc.Reads() - 1
	if failed == 0 {
		return "", noRebuild(sc, what+" rebuild for another to follow")
	}
	sc.db.Fail(nil)
	sc.db.Panic(nil)
	back := sc.Reads()
	later := stale + afterFailure
	if panics {
		// A rebuild that panicked may leave its lock to expire, as a
		// holder that died does: the next reader comes once the longest
		// lock the checker accepts has gone, inside the grace window.
		later = stale + panicLockLife + time.Second
	}
	if err := sc.until(later); err != nil {
		return "", case06.StuckVerdict(err)
	}
	next := sc.visit(0, 1)
	if err := sc.Drive(next.Done, case06.Patience); err != nil {
		return "", case06.WaitVerdict(err, "the reader after the source came back was")
	}
	if err := sc.settled(); err != nil {
		return "", case06.StuckVerdict(err)
	}
	if got, bad := lists(next.Outcomes()); bad != "" || got < 1 {
		if bad == "" {
			bad = fmt.Sprintf("it got an error, %v", firstErr(next.Outcomes()))
		}
		return "", check.Failed("", fmt.Sprintf("at %s, with the list stale and inside its physical expiry, shop-1's reader: %s",
			sc.at(later), bad))
	}
	reads := sc.Reads() - back
	figure := fmt.Sprintf("%s after the source came back", count(reads, "read"))
	if panics {
		figure = fmt.Sprintf("%s after a rebuild's query panicked", count(reads, "read"))
	}
	if reads == 0 {
		return "", check.Failed(figure, fmt.Sprintf("the list was filled at %s and the source went down. At %s shop-1's reader "+
			"found it stale and set a rebuild going, which %s (%s). The source was back, and at %s shop-1's next "+
			"reader found the list stale again; nothing rebuilt it, and nothing will on that instance until Redis drops the "+
			"list. A failed rebuild ends like one that landed, a panicking one too: release the lock, and clear whatever "+
			"marks a rebuild as running on the instance (a flag, a map entry), on every path out (a defer)", sc.at(0),
			sc.at(stale), what, count(failed, failedHow), sc.at(later)))
	}
	return figure, check.Passed(figure)
}

// retryAfterCrossedLeave is RetryAfterFailure's third scene, a logical
// expiry after another: at each, shop-1's first stale reader sets a
// rebuild going, held as it reads the source; a second stale reader of
// shop-1 comes, and is stopped at one statement of its way (point.ParkAt,
// the n-th at the n-th expiry, over the path point.Count saw at the
// first), while the rebuild lands; then it goes on. At every expiry the
// first reader must set a rebuild going. It catches a count of the
// instance's refreshers lowered in two steps (loaded, then stored one
// less): the second reader, backing off, stopped between the two while
// the rebuild's own count-out runs, stores a count one too high for good,
// and the instance never rebuilds the shelf again
// (c09-refreshers-clamp-store). A shop whose first reader sets no rebuild
// going at the first expiry plays no scene (its figure is empty).
func retryAfterCrossedLeave(h *harness.H, newShop NewShop) check.Verdict {
	sc, fail := filledScene(h, newShop, 1)
	if sc == nil {
		return fail
	}
	defer sc.Close()
	at := stale
	// expiry plays one logical expiry at at, the second reader under s
	// (which lets it go when it ends, after the rebuild has landed), and
	// reports whether the first reader's rebuild began; mid runs once the
	// second reader is at rest, before the rebuild lands.
	expiry := func(s *point.Schedule, mid func()) (bool, check.Verdict) {
		if err := sc.until(at); err != nil {
			return false, case06.StuckVerdict(err)
		}
		gate := sc.db.Hold()
		defer sc.db.Open()
		first := sc.visit(0, 1)
		if err := sc.settled(); err != nil {
			return false, case06.StuckVerdict(err)
		}
		if sc.db.Held() == 0 {
			return false, check.Passed("")
		}
		var second *harness.Crowd[[]string]
		v := h.Under(s, func() check.Verdict {
			second = sc.visit(0, 1)
			if err := sc.settled(); err != nil {
				return case06.StuckVerdict(err)
			}
			mid()
			gate.Open() // the rebuild lands, the second reader stopped or not
			if err := sc.settled(); err != nil {
				return case06.StuckVerdict(err)
			}
			return check.Passed("")
		})
		if !v.Pass {
			return true, v
		}
		if err := sc.Drive(func() bool { return first.Done() && second.Done() }, case06.Patience); err != nil {
			return true, case06.WaitVerdict(err, "the two stale readers were")
		}
		if err := sc.settled(); err != nil {
			return true, case06.StuckVerdict(err)
		}
		at += stale // the list the rebuild wrote at at, stale again
		return true, check.Passed("")
	}
	count := point.Count()
	path := 0
	began, v := expiry(count, func() { path = count.Hits() })
	if !v.Pass || !began || path == 0 {
		return v // no rebuild at the expiry: noRebuild's, in the first scene
	}
	// Each expiry's first reader shows what the last one's stop did: the
	// loop's last expiry, past the path, looks at the path's last stop.
	stoppedAt := "" // where the second reader was stopped at the last expiry
	for n := 1; n <= path+1; n++ {
		park := point.ParkAt(n)
		was := sc.at(at)
		began, v := expiry(park, func() {}) // the schedule's end lets the second reader go
		if !v.Pass {
			return v
		}
		if !began && n == 1 {
			return check.Failed("no rebuild after a reader backed off", fmt.Sprintf("at one logical expiry shop-1's "+
				"first stale reader set a rebuild going, and a second stale reader came while it read the source; at "+
				"the next, %s, shop-1's reader found the list stale and started no rebuild: nothing will on that "+
				"instance until Redis drops the list. Whatever marks a refresh as running must be cleared by the "+
				"reader who backs off as much as by the rebuild, in one step each (Add(-1), or under one lock)", was))
		}
		if !began {
			return check.Failed("no rebuild after a reader backed off", fmt.Sprintf("at one logical expiry after another, "+
				"shop-1's first stale reader set a rebuild going, held as it read the source, and a second stale reader "+
				"came meanwhile; the rebuild landed while the second was stopped at one statement of its way, and "+
				"then it went on. After the second was stopped at statement %d of its way (%s), at %s shop-1's "+
				"reader found the list stale and started no rebuild: nothing will on that instance until Redis drops "+
				"the list. A count of the readers refreshing is lowered in two steps there (loaded, then stored one "+
				"less), and the rebuild's own count-out fell between them: lower it in one step (Add(-1), or under "+
				"the lock that raises it)", n-1, stoppedAt, was))
		}
		stoppedAt = park.ParkedWhere()
	}
	return check.Passed(fmt.Sprintf("a reader stopped at each of the %d statements of its way as another's rebuild landed, "+
		"and a rebuild at each next expiry", path))
}

// retryAfterEarlyLanding is RetryAfterFailure's second scene: a stale
// reader of shop-1 starts a rebuild on a goroutine of its own, and is
// parked at its next statement (point.ParkSpawners) while that rebuild
// runs to its end, as the runtime may run a new goroutine before the one
// that started it; then the reader goes on. At the refreshed list's next
// logical expiry, shop-1's next stale reader must see a rebuild start. It
// catches a "rebuilding" mark the reader sets after it has started the
// rebuild, which the rebuild's own clearing then precedes: it stays set,
// and the instance never rebuilds the shelf again (c09-flag-after-go). A
// reader that starts no goroutine, or whose rebuild does not read the
// source while it is parked, plays no scene (its figure is empty).
func retryAfterEarlyLanding(h *harness.H, newShop NewShop) check.Verdict {
	sc, fail := filledScene(h, newShop, 1)
	if sc == nil {
		return fail
	}
	defer sc.Close()
	if err := sc.until(stale); err != nil {
		return case06.StuckVerdict(err)
	}
	base := sc.Reads()
	park := point.ParkSpawners()
	landed := false
	v := h.Under(park, func() check.Verdict {
		first := sc.visit(0, 1)
		// The rebuild reads the source and lands while its reader is
		// parked; a shop whose reader waits for something else first is
		// let go, and plays no scene.
		err := sc.Drive(func() bool { return sc.Reads() > base }, case06.Patience)
		if err == nil {
			err = sc.settled()
		}
		landed = err == nil && park.Parked() > 0 && sc.Reads() > base
		park.Unpark()
		if err := sc.Drive(first.Done, case06.Patience); err != nil {
			return case06.WaitVerdict(err, "the reader of the stale list, let go after its rebuild landed, was")
		}
		if err := sc.settled(); err != nil {
			return case06.StuckVerdict(err)
		}
		return check.Passed("")
	})
	if !v.Pass || !landed {
		return v
	}
	again := stale + stale // the refreshed list's next moment past its logical expiry
	if err := sc.until(again); err != nil {
		return case06.StuckVerdict(err)
	}
	back := sc.Reads()
	next := sc.visit(0, 1)
	if err := sc.Drive(next.Done, case06.Patience); err != nil {
		return case06.WaitVerdict(err, "the reader of the refreshed list, stale again, was")
	}
	if err := sc.settled(); err != nil {
		return case06.StuckVerdict(err)
	}
	if _, bad := lists(next.Outcomes()); bad != "" {
		return check.Failed("", fmt.Sprintf("at %s, with the list stale again, shop-1's reader: %s", sc.at(again), bad))
	}
	if sc.Reads() == back {
		return check.Failed("no rebuild after an early landing", fmt.Sprintf("at %s shop-1's reader found the list stale and "+
			"started its rebuild on a goroutine of its own; that goroutine ran to its end, the list stored and the lock let "+
			"go, before the reader's next statement (the runtime may run a new goroutine first). At %s the list was stale "+
			"again, and shop-1's reader started no rebuild: nothing will on that instance until Redis drops the list. "+
			"Whatever marks a rebuild as running must be set before the goroutine starts (or by it), never after the go "+
			"statement, where the rebuild's own clearing can come first", sc.at(stale), sc.at(again)))
	}
	return check.Passed("a rebuild that landed before its reader's next statement, and another at the next expiry")
}

// ShelvesApart checks that two shelves stale on one instance are rebuilt
// apart: with the bestsellers' rebuild held at the database, a stale
// reader of new releases on the same instance must see its own shelf's
// rebuild start. It catches one "refresh running" flag, or one refresh
// flight, for every shelf of an instance.
func ShelvesApart(h *harness.H, newShop NewShop) check.Verdict {
	sc, fail := filledScene(h, newShop, 1)
	if sc == nil {
		return fail
	}
	defer sc.Close()
	other := catalog.NewReleases
	c := sc.visitShelf(0, other, 1)
	if err := sc.Drive(c.Done, case06.Patience); err != nil {
		return case06.WaitVerdict(err, "the first reader of "+other+" was")
	}
	if err := sc.settled(); err != nil {
		return case06.StuckVerdict(err)
	}
	base := sc.DB().Queries(other)
	sc.db.HoldShelf(catalog.Bestsellers)
	if err := sc.until(stale); err != nil {
		return case06.StuckVerdict(err)
	}
	held := sc.visit(0, 1)
	if err := sc.settled(); err != nil {
		return case06.StuckVerdict(err)
	}
	if sc.Reads() == 1 {
		return noRebuild(sc, "rebuild of the bestsellers to hold while "+other+" went stale")
	}
	reader := sc.visitShelf(0, other, 1)
	if err := sc.Drive(reader.Done, case06.Patience); err != nil {
		return case06.WaitVerdict(err, "the stale reader of "+other+" was")
	}
	if err := sc.settled(); err != nil {
		return case06.StuckVerdict(err)
	}
	reads := sc.DB().Queries(other) - base
	figure := fmt.Sprintf("%s of %s with the bestsellers' rebuild held", count(reads, "read"), other)
	if reads == 0 {
		return check.Failed(figure, fmt.Sprintf("both shelves were filled on shop-1 at %s. At %s a reader of %s on shop-1 "+
			"found it stale while the bestsellers' rebuild was held at the database, and nothing rebuilt %s. One shelf's rebuild must not stand for another's: key whatever "+
			"keeps an instance to one rebuild (a flag, a flight, the lock) by the shelf", sc.at(0), sc.at(stale), other, other))
	}
	sc.db.Open()
	if err := sc.Drive(held.Done, case06.Patience); err != nil {
		return case06.WaitVerdict(err, "the bestsellers' reader was")
	}
	return check.Passed(figure)
}

// DeleteKeepsLock checks that the write path's delete leaves the rebuild
// lock to its holder: a rebuild holds the lock, its read held at the
// database; a change to the shelf commits, and the write path deletes the
// list; readers on every instance find nothing. It catches an Invalidate
// that deletes the lock with the list, after which a second read starts
// while the first runs, and both land.
//
// The old rebuild may land after the delete and write the list it read
// before the change: the chapter admits that race ("More to try") and the
// reference has it, with one read. A shop may also start a second read
// after a delete, if it refuses the old rebuild's list (a version in the
// lock and the value, checked on write): the explorer excuses reads at
// once after a delete. What no right answer does is both: a second read
// while the first runs, and the first's pre-change list written back.
func DeleteKeepsLock(h *harness.H, newShop NewShop) check.Verdict {
	ctx := h.Context()
	sc, fail := filledScene(h, newShop, 3)
	if sc == nil {
		return fail
	}
	defer sc.Close()
	old := sc.db.Hold()
	if err := sc.until(stale); err != nil {
		return case06.StuckVerdict(err)
	}
	starter := sc.visit(0, 1)
	if err := sc.settled(); err != nil {
		return case06.StuckVerdict(err)
	}
	if sc.db.Held() == 0 {
		return noRebuild(sc, "rebuild holding the lock when the write path deleted the list")
	}
	// The change commits while the old rebuild reads, then the delete.
	books := catalog.Books(catalog.Bestsellers)
	gone := books[0] // in the list the old rebuild read, not in the committed one
	changed := append([]string{"A Title Committed at " + sc.at(stale)}, books[1:]...)
	sc.DB().Write(catalog.Bestsellers, changed)
	if err := sc.shops[1].Invalidate(ctx, catalog.Bestsellers); err != nil {
		return check.Failed("", fmt.Sprintf("Invalidate on shop-2 at %s: %v", sc.at(stale), err))
	}
	sc.db.Hold() // reads begun after the delete wait at a gate of their own
	after := sc.burst(2)
	if err := sc.settled(); err != nil {
		return case06.StuckVerdict(err)
	}
	extra := sc.db.Held()
	figure := fmt.Sprintf("%s at once after the delete", count(1+extra, "read"))
	if extra > 0 {
		old.Open() // the old rebuild lands; the reads after the delete stay held
		if err := sc.settled(); err != nil {
			return case06.StuckVerdict(err)
		}
		values, err := sc.World.Values(ctx)
		if err != nil {
			return fleet.Unreachable(err)
		}
		for k, v := range values {
			if !strings.Contains(v, gone) {
				continue
			}
			return check.Failed(figure, fmt.Sprintf("at %s a rebuild held the lock and read the source (held at the "+
				"database); a change to the shelf committed, and shop-2's Invalidate deleted the list. The readers after "+
				"it, on %d instances, started %s of the shelf while the first still ran: nothing held them back (the "+
				"rebuild's lock was deleted with the list, or never taken in Redis). Then the first "+
				"landed and wrote its list, read before the change, to %s: two reads, and the second bought nothing. "+
				"Invalidate deletes the list and leaves the lock to the rebuild that holds it; the readers after it wait "+
				"for that rebuild, or answer \"try again\"", sc.at(stale), len(sc.shops), count(extra, "more read"), k))
		}
		figure += ", and the old rebuild's list refused"
	}
	sc.db.Open()
	if err := sc.Drive(func() bool { return starter.Done() && after.Done() }, case06.Patience); err != nil {
		return case06.WaitVerdict(err, "after the delete, the readers were")
	}
	return check.Passed(figure)
}

// takenOver is how far Redis's clock runs ahead of the shops' while a
// refresh's rebuild is held at the database, before another instance
// comes for the lock: longer than any lock the checker accepts (10 s),
// short of the list's physical expiry.
const takenOver = 20 * time.Second

// mostCommands is how many of shop-1's commands after its query
// RefreshHolderOnly stages a takeover before, one scene each.
const mostCommands = 6

// RefreshHolderOnly stages case 6's takeover on the refresh path: shop-1's
// rebuild of a stale list outlives its lock, and shop-2 takes the lock and
// starts a rebuild of its own, held at the database. Then shop-1's
// rebuild goes on: whatever shop-2 took must be as it left it. The
// takeover is staged while shop-1's query runs, and then before each
// command shop-1 sends after its query, one scene each, so that a release
// in two steps (read the token, then delete) is caught between them. A
// last scene stages it once more while shop-1's query runs, with the next
// stale reader on shop-1 itself: a shop that keeps its refreshes to one
// per instance in process starts no second rebuild there, and passes; one
// that takes the lock again must have drawn a token of its own for it. It
// catches a refresh that releases the lock with a plain DEL, with a token
// shared by every instance, with a compare-then-delete in two commands,
// with one token for every lock of an instance, or with the token the
// instance last took a lock with.
func RefreshHolderOnly(h *harness.H, newShop NewShop) check.Verdict {
	for k := 0; k <= mostCommands; k++ {
		v, more := refreshTakeover(h, newShop, k, 1)
		if !v.Pass {
			return v
		}
		if !more {
			break
		}
	}
	v, _ := refreshTakeover(h, newShop, 0, 0)
	if !v.Pass {
		return v
	}
	return check.Passed("shop-1's refresh taken over by shop-2 while its query ran and before each command after it, " +
		"and by shop-1's next stale reader while its query ran")
}

// refreshTakeover stages one takeover of shop-1's refresh: while its
// query runs (k = 0), or before the k-th command it sends after its
// query, by a stale reader of the instance taker (0 is shop-1 itself). It
// reports false once shop-1 sends fewer commands.
func refreshTakeover(h *harness.H, newShop NewShop, k, taker int) (check.Verdict, bool) {
	ctx := h.Context()
	sc, err := newScene(h, newShop, 2)
	if err != nil {
		return fleet.Unreachable(err), false
	}
	defer sc.Close()
	if v := sc.fill(); !v.Pass {
		return v, false
	}
	first := sc.db.Hold()
	if err := sc.until(stale); err != nil {
		return case06.StuckVerdict(err), false
	}
	a := sc.visit(0, 1)
	if err := sc.settled(); err != nil {
		return case06.StuckVerdict(err), false
	}
	if sc.db.Held() == 0 {
		return noRebuild(sc, "refresh for another reader to take over"), false
	}
	// Shop-1 goes on at go: its query returns (k = 0), or its held command
	// is sent. Its lock expires in Redis alone: the shops' clock stands
	// still, so that a rebuild whose deadline is its lock's time to live
	// is still inside it when it goes on, as it is in production when
	// Redis's clock runs ahead of the instance's, or when the lock's time
	// counted from Redis's execution of SET NX and the deadline from the
	// reply that came back later.
	late, when, goOn := stale+takenOver, fmt.Sprintf("its rebuild's query ran while its lock expired in Redis "+
		"(Redis's clock %v ahead of the shops')", takenOver), first.Open
	if k > 0 {
		hold := sc.stalls[0].armAfter(k-1, true)
		defer hold.Release()
		first.Open()
		if err := sc.settled(); err != nil {
			return case06.StuckVerdict(err), false
		}
		if !hold.Reached() {
			return check.Passed(fmt.Sprintf("shop-1's refresh taken over while its query ran and before each of its %d "+
				"commands after it", k-1)), false
		}
		// Shop-1's lock expires in Redis and the list is invalidated:
		// shop-2 misses and goes for the lock.
		when = fmt.Sprintf("its query had returned, and its command %d after it, %q, was held on its way to Redis "+
			"while its lock expired there and the list was invalidated", k, hold.Sent())
		goOn = hold.Release
	}
	before, err := sc.World.Values(ctx)
	if err != nil {
		return fleet.Unreachable(err), false
	}
	lives, err := sc.World.TTLs(ctx)
	if err != nil {
		return fleet.Unreachable(err), false
	}
	if k == 0 {
		err = sc.World.Advance(ctx, late-stale, nil)
	} else {
		err = sc.World.DeleteAll(ctx)
	}
	if err != nil {
		return fleet.Unreachable(err), false
	}
	sc.db.Hold() // the taker's rebuild waits at a gate of its own
	b := sc.visit(taker, 1)
	if err := sc.settled(); err != nil {
		return case06.StuckVerdict(err), false
	}
	took, err := sc.World.Values(ctx)
	if err != nil {
		return fleet.Unreachable(err), false
	}
	// The keys the taker wrote since shop-1 was held (its lock): new ones,
	// changed ones, and ones that would have expired meanwhile (a lock
	// taken again with the same value, a token every instance shares).
	var taken []string
	for key, v := range took {
		was, ok := before[key]
		ttl, timed := lives[key]
		if !ok || was != v || timed && ttl >= 0 && ttl < late-stale {
			taken = append(taken, key)
		}
	}
	slices.Sort(taken)
	goOn()
	if err := sc.Drive(a.Done, case06.Patience); err != nil {
		return case06.WaitVerdict(err, "shop-1's reader was"), false
	}
	if err := sc.settled(); err != nil {
		return case06.StuckVerdict(err), false
	}
	now, err := sc.World.Values(ctx)
	if err != nil {
		return fleet.Unreachable(err), false
	}
	who := fmt.Sprintf("shop-%d", taker+1)
	figure := "taken over while shop-1's query ran"
	if k > 0 {
		figure = fmt.Sprintf("taken over before shop-1's command %d after its query", k)
	}
	reader, own := who+"'s reader", ""
	if taker == 0 {
		figure = "taken over by shop-1's next stale reader while its query ran"
		reader, who = "shop-1's next stale reader", "the second rebuild's"
		own = " (the same instance's: a token drawn for the instance, or kept in it and read back at the release, " +
			"is the second lock's too)"
	}
	for _, key := range taken {
		if got, ok := now[key]; !ok || got != took[key] {
			what := "deleted"
			if ok {
				what = "overwrote"
			}
			return check.Failed(figure, fmt.Sprintf("shop-1 found the list stale at %s and started its rebuild; %s, past "+
				"its lock's time to live. At %s %s came, took %s and started its own rebuild. Then shop-1's first rebuild went "+
				"on and %s %s, which was %s%s. A deadline as long as the lock narrows that window and cannot close it. A refresh releases the lock as a cold miss does: one atomic "+
				"compare-and-delete of a random token drawn for that lock and held by that rebuild alone (a Lua script), "+
				"never a plain DEL, a GET then a DEL, a token every instance shares, or one token for an instance's "+
				"locks", sc.at(stale), when, sc.at(stale), reader, key, what, key, who, own)), false
		}
	}
	sc.db.Open()
	if err := sc.Drive(b.Done, case06.Patience); err != nil {
		return case06.WaitVerdict(err, reader+" was"), false
	}
	return check.Passed(figure), true
}

// SecondLook checks that a rebuild looks at Redis again once it has the
// lock: shop-1's rebuild of a stale list is held at the database; a stale
// reader on shop-2 looks at Redis, and its first command that may write
// (its lock attempt) is held on its way; shop-1's rebuild lands and lets
// go of the lock; then shop-2's command goes on. The list in Redis is
// fresh by then, so no read may follow. It catches a second look made
// before the lock is taken, and no second look at all.
func SecondLook(h *harness.H, newShop NewShop) check.Verdict {
	sc, fail := filledScene(h, newShop, 2)
	if sc == nil {
		return fail
	}
	defer sc.Close()
	sc.db.Hold()
	if err := sc.until(stale); err != nil {
		return case06.StuckVerdict(err)
	}
	a := sc.visit(0, 1)
	if err := sc.settled(); err != nil {
		return case06.StuckVerdict(err)
	}
	if sc.db.Held() == 0 {
		return noRebuild(sc, "rebuild to land while shop-2 went for the lock")
	}
	hold := sc.stalls[1].arm()
	defer hold.Release()
	b := sc.visit(1, 1)
	if err := sc.settled(); err != nil {
		return case06.StuckVerdict(err)
	}
	stalled := hold.Reached()
	sc.db.Open() // shop-1's rebuild lands and lets go of the lock
	if err := sc.Drive(a.Done, case06.Patience); err != nil {
		return case06.WaitVerdict(err, "shop-1's reader was")
	}
	if err := sc.settled(); err != nil {
		return case06.StuckVerdict(err)
	}
	landed := sc.Reads()
	hold.Release()
	if err := sc.Drive(b.Done, case06.Patience); err != nil {
		return case06.WaitVerdict(err, "shop-2's reader was")
	}
	if err := sc.settled(); err != nil {
		return case06.StuckVerdict(err)
	}
	again := sc.Reads() - landed
	figure := fmt.Sprintf("%s after shop-1's rebuild landed", count(again, "read"))
	if again > 0 {
		meanwhile := ""
		if stalled {
			meanwhile = fmt.Sprintf("shop-2's reader found it stale too, and its %q was held on its way to Redis; "+
				"meanwhile ", hold.Sent())
		}
		return check.Failed(figure, fmt.Sprintf("at %s shop-1 found the list stale and started its rebuild; %sshop-1's "+
			"rebuild landed, wrote a fresh list and let go of the lock. Then shop-2 went on, and read the source again (%s), "+
			"for a list a moment old. Whoever takes the lock looks at Redis again under it, after the SET NX, not before: "+
			"a look before is already out of date", sc.at(stale), meanwhile, count(again, "read")))
	}
	// Its second look found the list fresh: it has no reason to keep the
	// lock either. The write path deletes the list, and a cold reader's
	// read of the source must begin within a lock's time to live.
	if err := sc.shops[0].Invalidate(h.Context(), catalog.Bestsellers); err != nil {
		return check.Failed("", fmt.Sprintf("Invalidate on shop-1: %v", err))
	}
	sc.db.Hold() // the cold reader's read waits at a gate of its own
	deleted := sc.Clock.Now()
	c := sc.visit(0, 1)
	err := sc.Drive(func() bool { return sc.db.Held() > 0 || c.Done() }, lockLife)
	if err != nil && !errors.Is(err, fleet.ErrNoBound) {
		return case06.WaitVerdict(err, "shop-1's reader after the delete was")
	}
	if waited := sc.Clock.Now().Sub(deleted).Round(time.Millisecond); sc.db.Held() == 0 || waited >= lockLife {
		return check.Failed(fmt.Sprintf("no read within %v of the delete", lockLife), fmt.Sprintf("at %s shop-2's stale "+
			"reader went for the lock just as shop-1's rebuild landed; its second look found the list fresh, and it "+
			"read nothing (right). Then the write path deleted the list, and shop-1's reader, who found nothing, began "+
			"no read of the source within %v: the lock was still in Redis, kept by a rebuild that had nothing left to "+
			"do. A rebuild lets go of its lock on every way out, the second look's hit too (a defer)", sc.at(stale),
			lockLife))
	}
	sc.db.Open()
	if err := sc.Drive(c.Done, case06.Patience); err != nil {
		return case06.WaitVerdict(err, "shop-1's reader after the delete was")
	}
	return check.Passed(figure + "; the lock let go: a read after a delete began at once")
}

// lockLife is the longest a lock may live that the chapter's numbers
// allow: case 6's 2 s.
const lockLife = 2 * time.Second

// RefreshLetsGo checks that a refresh lets go of the lock when it lands,
// though the reader who set it off has left: shop-1's stale reader starts
// the rebuild, held at the database, and returns, its context ending as a
// request's does; then the rebuild lands, and the fleet comes to rest.
// The write path deletes the list, and a reader on shop-2 finds nothing:
// no rebuild runs and none holds the lock, so its read of the source must
// begin before the shops' clock has moved a lock's time to live (2 s),
// and it must get the list. It catches a refresh that releases its lock
// on the reader's ended context, whose error nobody sees, and one that
// leaves its lock to expire: the reader loses the lock to a rebuild that
// has finished and waits for a fill nobody makes.
func RefreshLetsGo(h *harness.H, newShop NewShop) check.Verdict {
	ctx := h.Context()
	sc, fail := filledScene(h, newShop, 2)
	if sc == nil {
		return fail
	}
	defer sc.Close()
	var err error
	first := sc.db.Hold()
	if err := sc.until(stale); err != nil {
		return case06.StuckVerdict(err)
	}
	a := sc.visit(0, 1)
	if err := sc.settled(); err != nil {
		return case06.StuckVerdict(err)
	}
	if sc.db.Held() == 0 {
		return noRebuild(sc, "refresh to let go of its lock")
	}
	if !a.Done() {
		return check.Failed("the stale reader waited", fmt.Sprintf("at %s shop-1's reader found the list stale, set its "+
			"rebuild going, and waited for it, held at the database, instead of being served the stale list at once (see "+
			"no-wait): this check needs a refresh that outlives the reader who set it off, and this reader never left",
			sc.at(stale)))
	}
	first.Open() // the rebuild lands, its reader gone
	if err := sc.settled(); err != nil {
		return case06.StuckVerdict(err)
	}
	landed := sc.Reads()
	if err := sc.shops[0].Invalidate(ctx, catalog.Bestsellers); err != nil {
		return check.Failed("", fmt.Sprintf("Invalidate on shop-1 at %s: %v", sc.at(stale), err))
	}
	sc.db.Hold() // the cold reader's read waits at a gate of its own
	deleted := sc.Clock.Now()
	b := sc.visit(1, 1)
	err = sc.Drive(func() bool { return sc.db.Held() > 0 || b.Done() }, lockLife)
	if err != nil && !errors.Is(err, fleet.ErrNoBound) {
		return case06.WaitVerdict(err, "shop-2's reader after the delete was")
	}
	waited := sc.Clock.Now().Sub(deleted).Round(time.Millisecond)
	if n, _ := lists(b.Outcomes()); n > 0 && sc.db.Held() == 0 {
		return check.Failed("served with no read", "after the write path deleted the list, shop-2's reader was served a "+
			"list with no read of the source: the old one, which the delete was meant to remove (see delete)")
	}
	if sc.db.Held() == 0 || waited >= lockLife {
		got := fmt.Sprintf("was still waiting %v later, and no read of the source had begun", waited)
		if b.Done() {
			got = fmt.Sprintf("answered %q after %v, and no read of the source had begun", fmt.Sprint(firstErr(b.Outcomes())), waited)
		} else if sc.db.Held() > 0 {
			got = fmt.Sprintf("began its read of the source only %v later", waited)
		}
		return check.Failed(fmt.Sprintf("no read within %v of the delete", lockLife), fmt.Sprintf("at %s shop-1's reader "+
			"found the list stale, set its rebuild going and left, its context ending as a request's does; the rebuild's "+
			"query returned (%s in all) and the fleet came to rest. Then the write path deleted the list, and shop-2's reader, "+
			"who found nothing, %s: no rebuild ran, and the lock was still in Redis, held by nobody. The rebuild lets go "+
			"of its lock when it ends, on its own context (the detached one it rebuilds on, not the reader's, which has "+
			"ended: go-redis refuses a command on it), and never leaves it to expire", sc.at(stale),
			count(landed, "read"), got))
	}
	sc.db.Open()
	if err := sc.Drive(b.Done, case06.Patience); err != nil {
		return case06.WaitVerdict(err, "shop-2's reader after the delete was")
	}
	if n, bad := lists(b.Outcomes()); bad != "" || n < 1 {
		if bad == "" {
			bad = fmt.Sprintf("it got an error, %v", firstErr(b.Outcomes()))
		}
		return check.Failed("", fmt.Sprintf("after the delete at %s, with the source open, shop-2's reader: %s",
			sc.at(stale), bad))
	}
	if waited == 0 {
		return check.Passed("the read after the delete began at once")
	}
	return check.Passed(fmt.Sprintf("the read after the delete began %v after it", waited))
}
