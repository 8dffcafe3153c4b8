package case10

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"stampede/checker/check"
	"stampede/checker/fleet"
	"stampede/checker/harness"
	"stampede/shop/catalog"
)

// The checks of a filler whose database is slow, stuck or down: a lease
// is there for a filler that died, so a filler that is only slow keeps it,
// one whose read will never end lets it go, and while the database fails
// the fleet backs off from it.

// slowReadInfo is the check that a read slower than the lease still fills
// the cache.
var slowReadInfo = check.Info{
	ID:   "slow-read",
	Name: "a read of the row slower than the lease (4.5 s, and the contract's slowest: 5 s, its reply 5 ms later) still fills the cache, and one a write overtakes still cannot store what it read",
	Catches: "a lease that lapses under a filler that is still reading, so that every fill of a read slower than the " +
		"lease is refused and the cache never fills while the database is slow; a read given up before the " +
		"contract's 5 s, or at exactly 5 s, as its answer arrives (wrong/read-deadline-5s); a lease kept alive with a plain SET, which brings back a lease a write has ended or " +
		"takes the one another filler holds; a keepalive that goes on after its read; and one that stops at its " +
		"first failed renewal (wrong/keepalive-stops-on-error)",
}

// hungReadInfo is the check that a read that never ends does not keep the
// lease for ever.
var hungReadInfo = check.Info{
	ID:   "hung-read",
	Name: "a filler whose read of the row never ends lets the book go within the contract's bound: 21 s later a visitor reads the row",
	Catches: "a lease kept alive for as long as the read lasts, with no bound on the read: a hung query keeps the " +
		"book from the whole fleet until the database answers; and a read bounded past the contract's 20 s " +
		"(wrong/read-deadline-25s)",
}

// dbDownInfo is the check that a fleet backs off from a failing database.
var dbDownInfo = check.Info{
	ID: "db-down",
	Name: "while the database fails every read, the fleet reads it at most 10 times a second, not once per visitor " +
		"nor once per instance (6 instances, a visitor on each every 100 ms), every visitor returns within its " +
		"budget, and once it is back the price is served again within a second",
	Catches: "a failed read that lets its lease go at once, so that every visitor reads the failing database and " +
		"an outage becomes a stampede; a filler that retries a failing read at once, with no wait on the clock; " +
		"a backoff kept in each instance's memory, so that the fleet's reads grow with its instances " +
		"(wrong/backoff-in-memory); and a backoff that outlasts the outage",
}

// The scene of DatabaseDown.
const (
	// downFor is how long the database fails every read, and downEvery
	// how often a visitor comes meanwhile to each of downShops instances:
	// enough instances that a backoff each keeps for itself (one read per
	// instance every half second) reads more than the whole fleet may.
	downFor   = 2 * time.Second
	downEvery = 100 * time.Millisecond
	downShops = 6
	// downRate is how many reads a second the whole fleet may send a
	// failing database, however many instances it has. (Known answers
	// read 6 to 15 times in the scene, the reference 12; a backoff each
	// instance keeps in memory, refusing its own visitors meanwhile, 24.)
	downRate = 10
	// upWithin is how soon after the database is back a visitor must get
	// the price: a backoff ends with the outage.
	upWithin = time.Second
)

const (
	// slowestRead is the slowest read of the row the case's contract asks a
	// fill to wait for and store, and hungRead the longest it may go on
	// before the filler must give it up.
	slowestRead = 5 * time.Second
	hungRead    = 20 * time.Second
	// replyTime is how long, in SlowRead's last scene, the reply of a read
	// of slowestRead takes on its way: within the contract's 10 ms, and
	// short of it, so that a read bounded at exactly slowestRead gives it
	// up, in every run, and one bounded at slowestRead and the contract's
	// 10 ms keeps it, in every run (nothing else is due at its instant).
	replyTime = 5 * time.Millisecond
	// slowRead is how long every read of the row takes in SlowRead's
	// scenes: longer than the reference's lease, within the contract, and
	// short of slowestRead itself, so that a read bounded at exactly
	// slowestRead is not decided by which of two things due at one
	// instant runs first.
	slowRead = slowestRead - 500*time.Millisecond
	// slowWrite is when, in SlowRead's second scene, a write commits: in
	// the middle of the slow read, after its filler has had time to renew
	// its lease.
	slowWrite = slowRead / 2
	// hungWithin is how long, on the shops' clock, a filler whose read
	// hangs may keep the book from the fleet: the read given up by
	// hungRead, and the lease let go at once then (a second to spare).
	// Waiting out a lease's time to live as well (maxLease) let a read
	// deadline of 25 s through, past the contract's 20.
	hungWithin = hungRead + time.Second
)

// SlowRead checks that a live filler keeps its lease while it reads. In
// the first scene every read of the row takes slowRead, longer than the
// reference's lease and within the contract; shop-1's visitor misses and
// reads, the first Redis command shop-1 sends from a quarter into its
// read (a renewal) fails, and a visitor on shop-2 comes in the middle of
// it. No write
// comes, so shop-1's visitor must get the price, and the cache must hold
// it after: a later visitor gets it with no read of the row; and then,
// every visitor back, no instance may send Redis anything more. In the second scene, as slow, a write on shop-3
// commits in the middle of shop-1's read, and right after it a visitor on
// shop-2 misses and reads the new row; what shop-1 read before the commit
// must not be stored, and a visitor after both gets the new price. It
// catches a lease that lapses under its live filler, a keepalive that
// sets the lease rather than renewing it only while it holds its token,
// and one that goes on once every visitor is back.
func SlowRead(h *harness.H, newShop NewShop) check.Verdict {
	if v := slowFills(h, newShop); !v.Pass {
		return v
	}
	if v := slowOvertaken(h, newShop, false); !v.Pass {
		return v
	}
	if v := slowOvertaken(h, newShop, true); !v.Pass {
		return v
	}
	if v := slowestFills(h, newShop); !v.Pass {
		return v
	}
	return check.Passed(fmt.Sprintf("reads of %v: the slow fill was stored, and one a write overtook was refused, with a "+
		"reader after the write and with none; "+
		"a read of %v, its reply %v later, was stored too", slowRead, slowestRead, replyTime))
}

// slowScene is a scene of three instances whose every read of the row
// takes slowRead, with shop-1's visitor reading already.
func slowScene(h *harness.H, newShop NewShop) (*scene, *harness.Crowd[int], check.Verdict) {
	s, r1, _, v := slowSceneLeased(h, newShop, slowRead)
	return s, r1, v
}

// slowSceneLeased is slowScene with every read taking d, and says
// whether shop-1's visitor left a key in Redis (a lease) before its read.
func slowSceneLeased(h *harness.H, newShop NewShop, d time.Duration) (*scene, *harness.Crowd[int], bool, check.Verdict) {
	reads := fleet.HoldCalls()
	s, err := newScene(h, newShop, 3, reads, fleet.HoldCalls())
	if err != nil {
		return nil, nil, false, fleet.Unreachable(err)
	}
	reads.Then = catalog.RowHook(fleet.Slow(s.Clock, d)) // before any visitor comes
	r1 := s.Read(0)
	if err := s.Settle(); err != nil {
		s.Close()
		return nil, nil, false, stuckVerdict(err)
	}
	if s.reads.Calls() == 0 {
		s.Close()
		return nil, nil, false, s.neverRead()
	}
	keys, err := s.World.Keys(h.Context())
	if err != nil {
		s.Close()
		return nil, nil, false, fleet.Unreachable(err)
	}
	return s, r1, len(keys) > 0, check.Passed("")
}

// slowFills is SlowRead's first scene.
func slowFills(h *harness.H, newShop NewShop) check.Verdict {
	s, r1, v := slowScene(h, newShop)
	if !v.Pass {
		return v
	}
	defer s.Close()
	readEnds := s.Clock.Now().Add(slowRead)
	if err := s.Elapse(slowRead / 4); err != nil {
		return stuckVerdict(err)
	}
	// Renewed by now, if it is renewed at all: no renewal may give a lease
	// more than a lease may have.
	keys, err := s.World.Keys(h.Context())
	if err != nil {
		return fleet.Unreachable(err)
	}
	for _, k := range keys {
		if k.Forever || k.TTL > maxLease {
			return check.Failed(k.Name+" "+ttlText(k), fmt.Sprintf("%v into shop-1's read of the row, with nothing in "+
				"Redis but what its filler keeps, %s had %s: a lease lives at most %v, renewals included, since a "+
				"filler that dies right after renewing holds the book that long. Renew it to its own time to live",
				slowRead/4, k.Name, ttlText(k), maxLease))
		}
	}
	// The next command shop-1 sends while its read still runs, a renewal
	// in most answers, fails, as one Redis command does on a bad network:
	// one failed renewal must not end the keepalive, nor let the lease
	// lapse. (An answer whose lease outlives the read sends nothing then.)
	s.taps[0].Fail(func(c fleet.Command) bool { return len(c.Keys) > 0 && c.At.Before(readEnds) }, errRedis, 1)
	r2 := s.Read(1)
	if err := s.Drive(func() bool { return r1.Done() && r2.Done() }, slowRead+patience); err != nil {
		return waitVerdict(err, "the visitors, with every read of the row taking "+slowRead.String()+",")
	}
	figure := fmt.Sprintf("reads of %v", slowRead)
	if o := r1.Outcomes()[0]; o.Panic != "" || o.Err != nil || o.Value != oldPrice {
		return check.Failed(figure, fmt.Sprintf("shop-1's visitor missed and read the row, which took %v (the database was "+
			"slow, within the contract's %v), and got %s, with no write and one Redis command failing: the first "+
			"shop-1 sent while it read, from %v into the read (%s). A fill that waited for "+
			"a slow read must land: if the lease lapsed under the filler, keep it alive while the read runs (renew "+
			"it, in a script that checks the token, every third of its time to live, and go on after a renewal "+
			"that failed: the next one is still in time); and do not give the read up "+
			"before %v. Otherwise the cache never fills while the database is slow. Redis held: %s",
			slowRead, slowestRead, describe(o), slowRead/4, failedCommand(s.taps[0]), slowestRead, s.Cached()))
	}
	if v := gotOne(r2, "shop-2's visitor, who came while shop-1 read,", oldPrice); !v.Pass && r2.Outcomes()[0].Err == nil {
		return v
	}
	held, before := s.Cached(), s.RowReads()
	o, err := s.Fresh()
	if err != nil {
		return waitVerdict(err, "a visitor after the slow read was")
	}
	if again := s.RowReads() - before; again > 0 || o.Err != nil || o.Value != oldPrice {
		return check.Failed(figure, fmt.Sprintf("shop-1's visitor read the row (%v) and got the price, but the price was "+
			"not stored: a visitor after it, on a fresh instance, got %s and read the row %s. With no write in "+
			"between, the fill of a slow read must land: keep the lease alive while the read runs. Redis held: %s",
			slowRead, describe(o), fleet.Count(again, "more time"), held))
	}
	return quietAfter(s, figure)
}

// slowestFills is SlowRead's last scene: every read of the row takes the
// contract's slowest, slowestRead, and its reply replyTime more. Shop-1's
// visitor must get the price, and a visitor after it must get it with no
// read of the row: a read's deadline set at exactly slowestRead gives up
// the slowest read the contract promises to store.
func slowestFills(h *harness.H, newShop NewShop) check.Verdict {
	s, r1, _, v := slowSceneLeased(h, newShop, slowestRead+replyTime)
	if !v.Pass {
		return v
	}
	defer s.Close()
	if err := s.Drive(r1.Done, slowestRead+patience); err != nil {
		return waitVerdict(err, "shop-1's visitor, with its read of the row taking "+slowestRead.String()+",")
	}
	figure := fmt.Sprintf("a read of %v and %v", slowestRead, replyTime)
	o := r1.Outcomes()[0]
	before := s.RowReads()
	fresh, err := s.Fresh()
	if err != nil {
		return waitVerdict(err, "a visitor after the slowest read was")
	}
	again := s.RowReads() - before
	if o.Panic == "" && o.Err == nil && o.Value == oldPrice && again == 0 && fresh.Err == nil && fresh.Value == oldPrice {
		return check.Passed("")
	}
	return check.Failed(figure, fmt.Sprintf("shop-1's visitor missed and read the row, which took the contract's "+
		"slowest, %v, and its reply %v more; it got %s, and a visitor after it, on a fresh instance, got %s and read "+
		"the row %s. The contract's slowest read must be stored, reply included: a deadline of exactly %v gives "+
		"it up as its answer arrives. Give the read a deadline well past it (10 s, say)", slowestRead, replyTime,
		describe(o), describe(fresh), fleet.Count(again, "more time"), slowestRead))
}

// failedCommand names the command of t the scene's Tap.Fail struck, for a
// message.
func failedCommand(t *fleet.Tap) string {
	for _, c := range t.Log() {
		if c.Said == "error: "+errRedis.Error() {
			return fleet.Shorten(c.String())
		}
	}
	return "none was sent"
}

// quietAfter checks that, with every visitor of s back, no instance sends
// Redis anything more while the shops' clock moves on past any lease: a
// keepalive stops with its read.
func quietAfter(s *scene, figure string) check.Verdict {
	sent := make([]int, len(s.taps))
	for i, t := range s.taps {
		sent[i] = len(t.Log())
	}
	if err := s.Elapse(maxLease); err != nil {
		return stuckVerdict(err)
	}
	for i, t := range s.taps {
		if more := len(t.Log()) - sent[i]; more > 0 {
			return check.Failed(figure, fmt.Sprintf("every visitor had returned, and in the next %v of the shops' clock "+
				"shop-%d sent Redis %s more (%s): work that outlives the visitor it was for, such as a keepalive "+
				"that goes on after its read, or one on a context that is never cancelled. Stop it with the read, "+
				"and wait for it to stop", maxLease, i+1, fleet.Count(more, "command"), s.sentAfter(i, sent[i])))
		}
	}
	return check.Passed(figure)
}

// slowOvertaken is SlowRead's second scene and, alone, its third: the
// same write, and nobody after it until shop-1's read ends. Then the only
// lease a keepalive could find is one it brought back itself: it catches
// a keepalive that takes the lease again (SET NX under its token) when it
// finds it gone, which cannot tell a lapse from a write's delete.
func slowOvertaken(h *harness.H, newShop NewShop, alone bool) check.Verdict {
	s, r1, leased, v := slowSceneLeased(h, newShop, slowRead)
	if !v.Pass {
		return v
	}
	defer s.Close()
	if err := s.Elapse(slowWrite); err != nil {
		return stuckVerdict(err)
	}
	if v := s.WriteDone(2, newPrice); !v.Pass {
		return v
	}
	second := "right after it shop-2's visitor came for the price"
	var r2 *harness.Crowd[int]
	var quiet *fleet.Hold
	if alone {
		second = "nobody came until shop-1's read ended"
	} else {
		r2 = s.Read(1)
		if err := s.Drive(func() bool { return s.reads.Calls() >= 2 || r2.Done() }, patience); err != nil {
			return waitVerdict(err, "shop-2's visitor, after the write, was")
		}
	}
	if r2 != nil && s.reads.Calls() >= 2 {
		// Shop-2's filler is reading the new row, slowly, and alive: its
		// lease stays as it is, and its next command waits, so that only
		// shop-1 acts on the lease from now on and the order of two
		// instances' renewals at one instant decides nothing.
		second = "right after it shop-2's visitor missed and read the new row, holding a lease of its own"
		if err := s.KeepAlive(); err != nil {
			return fleet.Unreachable(err)
		}
		quiet = s.taps[1].Hold(func(fleet.Command) bool { return true })
		defer quiet.Release()
	}
	if err := s.Drive(r1.Done, slowRead+patience); err != nil {
		return waitVerdict(err, "shop-1's visitor, whose read a write overtook,")
	}
	if v := gotOne(r1, "shop-1's visitor, whose read a write overtook,", oldPrice, newPrice); !v.Pass && r1.Outcomes()[0].Err == nil {
		return v
	}
	figure := fmt.Sprintf("a write %v into a read of %v", slowWrite, slowRead)
	if alone {
		figure += ", and nobody after it"
	}
	held := s.Cached()
	o, err := s.Fresh()
	if err != nil {
		return waitVerdict(err, "a visitor right after shop-1's fill was")
	}
	if o.Panic == "" && o.Err == nil && o.Value == oldPrice {
		fix := "A lease kept alive with SET comes back after the write's delete, or takes the new filler's: renew it " +
			"only while it holds your token, in one script (GET, compare, PEXPIRE)"
		if !leased {
			fix = "Redis held nothing while shop-1 read: with no lease for the write's delete to end, nothing " +
				"refuses a fill that read the row before the commit (the stale set, on a slow day; stale-set " +
				"stages it at every step)"
		}
		if alone {
			fix = "The write's delete ended shop-1's lease, and nobody took it since: a keepalive that finds the " +
				"lease gone and takes it again cannot tell a lapse from a write's delete, and lets the old read " +
				"fill. When a renewal finds the lease gone, stop renewing, and let the fill be refused"
			if !leased {
				fix = "Redis held nothing while shop-1 read: with no lease for the write's delete to end, nothing " +
					"refuses a fill that read the row before the commit"
			}
		}
		return check.Failed(figure, fmt.Sprintf("shop-1's visitor missed and read the row, which took %v; %v into the read "+
			"a write on shop-3 committed %s and deleted the price, and %s. "+
			"Then shop-1's fill stored what it had read before the commit: a visitor on a fresh instance got %s. %s. "+
			"Redis held after shop-1's fill: %s",
			slowRead, slowWrite, cents(newPrice), second, cents(oldPrice), fix, held))
	}
	if quiet != nil {
		quiet.Release()
	}
	if r2 != nil {
		if err := s.Drive(r2.Done, slowRead+patience); err != nil {
			return waitVerdict(err, "shop-2's visitor, after the write,")
		}
		if v := gotOne(r2, "shop-2's visitor, after the write,", newPrice); !v.Pass && r2.Outcomes()[0].Err == nil {
			return v
		}
	}
	return s.served(figure, func(got int) string {
		return fmt.Sprintf("a write committed %s %v into shop-1's read of %v; after both fills a visitor on a fresh instance "+
			"got %s. Redis held: %s", cents(newPrice), slowWrite, slowRead, cents(got), s.Cached())
	})
}

// DatabaseDown checks that the fleet backs off from a failing database.
// For downFor every read of the row fails at once, while a visitor comes
// to each of downShops instances every downEvery: the fleet may read the
// database at most downRate times a second, and every visitor must return within a visitor's bound, with an error
// or the price. Then the database is back, and upWithin later a visitor
// must get the price. It catches a failed read that lets its lease go at
// once (every visitor reads the failing database), a filler that retries
// a failed read at once (a loop the clock never moves: the grader stops
// it), a backoff each instance keeps in its own memory (its reads grow
// with the instances), and a backoff longer than the outage.
func DatabaseDown(h *harness.H, newShop NewShop) check.Verdict {
	reads := fleet.HoldCalls()
	// A clock with a grain: the polls of 120 visitors due within a tick
	// of each other wake together, not one move of the clock each. The
	// verdict is a count over 2 s with room on both sides, and rests on
	// no two timers' order.
	s, err := newSceneClock(h, fleet.ServerURL(), fleet.NewClock(), newShop, downShops, reads, fleet.HoldCalls())
	if err != nil {
		return fleet.Unreachable(err)
	}
	defer s.Close()
	var up atomic.Bool
	reads.Then = func(context.Context, string) error { // before any visitor comes
		if up.Load() {
			return nil
		}
		return errDown
	}
	var crowds []*harness.Crowd[int]
	for range int(downFor / downEvery) {
		for i := range s.shops {
			crowds = append(crowds, s.Read(i))
		}
		if err := s.Elapse(downEvery); err != nil {
			return downVerdict(err, "the visitors, with the database down,")
		}
	}
	if err := s.Drive(func() bool { return fleet.AllDone(crowds) }, visitorBound); err != nil {
		return downVerdict(err, "the visitors, with the database down,")
	}
	n, limit := s.RowReads(), downRate*int(downFor/time.Second)
	figure := fmt.Sprintf("%s in %v of outage, %d visitors", fleet.Count(n, "read"), downFor, len(crowds))
	if n > limit {
		return check.Failed(figure, fmt.Sprintf("for %v every read of the row failed at once (%s), while a visitor came "+
			"to each of %d instances every %v; the fleet read the failing database %d times, more than %d a second. "+
			"An outage read by every visitor, or by every instance, becomes a stampede on "+
			"the database the moment it comes back, and grows with the fleet: after a failed read, keep the lease "+
			"in Redis a moment (a quarter of a second, say) as the whole fleet's backoff, and return the error",
			downFor, errDown, len(s.shops), downEvery, n, downRate))
	}
	for _, c := range crowds {
		if o := c.Outcomes()[0]; o.Panic != "" {
			return check.Failed(figure, "a visitor's call panicked: "+o.Panic)
		} else if o.Err == nil && o.Value != oldPrice {
			return check.Failed(figure, fmt.Sprintf("with the database down, a visitor got %s", cents(o.Value)))
		}
	}
	up.Store(true)
	if err := s.Elapse(upWithin - rebuild); err != nil {
		return stuckVerdict(err)
	}
	o, err := s.Fresh()
	if err != nil {
		return waitVerdict(err, "a visitor after the database came back was")
	}
	if o.Panic != "" || o.Err != nil || o.Value != oldPrice {
		return check.Failed(figure, fmt.Sprintf("the database was back for %v, and a visitor got %s: a backoff from a "+
			"failing database must end soon after it does (keep a failed read's lease a moment, not its whole time "+
			"to live). Redis held: %s", upWithin-rebuild, describe(o), s.Cached()))
	}
	return check.Passed(figure)
}

// downVerdict fails DatabaseDown's scene when it does not come to rest:
// code of the shop's kept running with the database failing at once, so
// the clock never moved, is a retry with no wait between tries.
func downVerdict(err error, who string) check.Verdict {
	var st *harness.Stuck
	if errors.As(err, &st) && st.Cause == harness.Running && st.Looping {
		return check.Failed("a retry with no wait", fmt.Sprintf("with every read of the row failing at once, the "+
			"shop's code kept running and never waited on the clock (%s): a filler that tries a failed read "+
			"again at once spins for as long as the outage lasts, and sends the database every try. Return the "+
			"error, and let the lease (kept a moment) pace the next try", strings.Join(st.Places, "; ")))
	}
	return waitVerdict(err, who)
}

// HungRead checks that a filler whose read never ends does not keep the
// book from the fleet. Shop-1's visitor, with no deadline, misses and
// reads, and the read never answers; hungWithin later a visitor on shop-2
// must read the row and get the price. It catches a lease kept alive for
// as long as the read lasts, with no bound on the read.
func HungRead(h *harness.H, newShop NewShop) check.Verdict {
	s, err := newScene(h, newShop, 2, fleet.HoldCalls(1), fleet.HoldCalls())
	if err != nil {
		return fleet.Unreachable(err)
	}
	defer s.Close()
	r1 := s.Read(0)
	if err := s.Settle(); err != nil {
		return stuckVerdict(err)
	}
	if s.reads.Calls() == 0 {
		return s.neverRead()
	}
	if err := s.Elapse(hungWithin); err != nil {
		return stuckVerdict(err)
	}
	if !r1.Done() {
		return check.Failed(fmt.Sprintf("a read open after %v", hungWithin), fmt.Sprintf("shop-1's visitor missed and read "+
			"the row, and the database never answered; it had no deadline of its own, and %v later it was still "+
			"waiting for that read. A read with no answer after %v will not end: give it a deadline of its own "+
			"(the contract: between %v and %v), and when it passes return the error and let the lease go",
			hungWithin, hungRead, slowestRead, hungRead))
	}
	held := s.Cached()
	r2 := s.Read(1)
	if err := s.Drive(r2.Done, patience); err != nil {
		return waitVerdict(err, fmt.Sprintf("shop-2's visitor, %v after shop-1's read hung,", hungWithin))
	}
	figure := fmt.Sprintf("a read hung; %v later the row was read again", hungWithin)
	if o := r2.Outcomes()[0]; s.reads.Calls() < 2 || o.Panic != "" || o.Err != nil || o.Value != oldPrice {
		return check.Failed(fmt.Sprintf("the book held for %v", hungWithin), fmt.Sprintf("shop-1's visitor missed and "+
			"read the row, and the database never answered (the visitor had no deadline); %v later shop-2's visitor "+
			"got %s%s. Keeping a lease alive while its read runs is right only while the read may still end: give the "+
			"read a deadline of its own (the contract: between %v and %v), and when it passes let the lease go. "+
			"Redis held when shop-2's visitor came: %s",
			hungWithin, describe(o), map[bool]string{true: " without reading the row", false: ""}[s.reads.Calls() < 2],
			slowestRead, hungRead, held))
	}
	return check.Passed(figure)
}
