package case10

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"stampede/checker/check"
	"stampede/checker/fleet"
	"stampede/checker/harness"
	"stampede/shop/catalog"
)

// The scenes' sizes and bounds.
const (
	// patience is how far the checker moves the shops' clock for a wait
	// that should end by itself.
	patience = 30 * time.Second
	// maxLease is the longest lease the checker accepts: a filler that dies
	// holds everyone else up that long, for a read of 0.2 s.
	maxLease = 10 * time.Second
	// maxPriceTTL is the longest a price may live in Redis: the bound on
	// how long a write whose delete was lost serves the old price.
	maxPriceTTL = time.Minute
	// rebuild is how long, on the shops' clock, a read of the row takes in
	// the scenes that let it run: the shop's 0.2 s.
	rebuild = catalog.QueryCost
	// maxCommands is how many of a reader's commands after its query the
	// checker stops it before, one scene each.
	maxCommands = 12
)

// DeleteAfterCommit checks that a read between the write's first step and
// its commit does not leave the old price in Redis. The cache holds the
// old price; a write starts and is held just before its commit; a reader
// on another instance comes; then the write commits and returns. A visitor
// after that must get the new price. It catches a delete before the commit.
func DeleteAfterCommit(h *harness.H, newShop NewShop) check.Verdict {
	s, err := newScene(h, newShop, 3, fleet.HoldCalls(), fleet.HoldCalls(1))
	if err != nil {
		return fleet.Unreachable(err)
	}
	defer s.Close()
	if v := s.warm(2); !v.Pass {
		return v
	}
	w := s.Write(0, newPrice)
	if err := s.Settle(); err != nil {
		return stuckVerdict(err)
	}
	if s.commits.Calls() == 0 {
		return waitVerdict(s.Drive(func() bool { return s.commits.Calls() > 0 }, patience), "shop-1's write, before its commit, was")
	}
	before := s.RowReads()
	r := s.Read(1)
	// The reader may wait for something the write holds; give it a read's
	// time, then let the write commit.
	if err := s.Drive(r.Done, rebuild); err != nil && !errors.Is(err, fleet.ErrNoBound) {
		return stuckVerdict(err)
	}
	reread := s.RowReads() > before
	s.commits.Gate(1).Open()
	if err := s.Drive(func() bool { return w.Done() && r.Done() }, patience); err != nil {
		return waitVerdict(err, "the write and the reader were")
	}
	if v := wrote(w, "shop-1's write"); !v.Pass {
		return v
	}
	if v := gotOne(r, "shop-2's visitor, during the write", oldPrice, newPrice); !v.Pass {
		return v
	}
	held := s.Cached()
	return s.served("write held before its commit, a read meanwhile", func(got int) string {
		msg := fmt.Sprintf("a visitor after the write got %s, the price before it. ", cents(got))
		if reread {
			msg += fmt.Sprintf("The write took the price out of Redis before its commit; shop-2's visitor came while the "+
				"write was not yet committed, missed, read the row (still %s) and stored it, and nothing took it out again. ", cents(oldPrice))
		}
		return msg + "Delete after the commit, never before: until the commit, a read can only find the old row. Redis held: " + held
	})
}

// DeleteNotSet checks that two writes whose cache updates reach Redis out
// of order leave the last committed price, or nothing. Shop-1's write
// commits and is stopped before its first Redis command after the commit;
// shop-2's write commits and finishes; then shop-1 goes on. It catches a
// write path that sets the new price in Redis instead of deleting it.
func DeleteNotSet(h *harness.H, newShop NewShop) check.Verdict {
	s, err := newScene(h, newShop, 3, fleet.HoldCalls(), fleet.HoldCalls(1))
	if err != nil {
		return fleet.Unreachable(err)
	}
	defer s.Close()
	warm := s.Read(2)
	if err := s.Drive(warm.Done, patience); err != nil {
		return waitVerdict(err, "the first visitor, with Redis empty, was")
	}
	w1 := s.Write(0, newPrice)
	if err := s.Drive(func() bool { return s.commits.Calls() > 0 || w1.Done() }, patience); err != nil {
		return waitVerdict(err, "shop-1's write, before its commit, was")
	}
	since := len(s.taps[0].Log())
	stop := s.taps[0].Hold(fleet.Nth(1))
	defer stop.Release()
	s.commits.Gate(1).Open()
	if err := s.Drive(func() bool { return stop.Reached() || w1.Done() }, patience); err != nil {
		return waitVerdict(err, "shop-1's write was")
	}
	w2 := s.Write(1, newer)
	if err := s.Drive(w2.Done, patience); err != nil {
		return waitVerdict(err, "shop-2's write, while shop-1's was stopped after its commit, was")
	}
	stop.Release()
	if err := s.Drive(w1.Done, patience); err != nil {
		return waitVerdict(err, "shop-1's write was")
	}
	for _, w := range []*harness.Crowd[int]{w1, w2} {
		if v := wrote(w, "a write"); !v.Pass {
			return v
		}
	}
	held := s.Cached()
	return s.served("two writes, their cache updates crossed", func(got int) string {
		if got != newPrice {
			return fmt.Sprintf("shop-1 set the price to %s and shop-2 then to %s; shop-1 was stopped after its commit, "+
				"before it sent %s, and sent it after shop-2's write had finished. A visitor after both got %s, not the "+
				"last committed price. Each write must leave Redis with nothing older than its own commit. Redis held: %s",
				cents(newPrice), cents(newer), s.sentAfter(0, since), cents(got), held)
		}
		return fmt.Sprintf("shop-1 set the price to %s and shop-2 then to %s; shop-1 was stopped after its commit, "+
			"before it sent %s, and sent it after shop-2's write had finished. A visitor after both got %s. A write that "+
			"sets the new price in Redis can be overtaken: the last SET wins, and the last one was built first. "+
			"Delete the key instead: a delete carries no value, so it cannot carry an old one. Redis held: %s",
			cents(newPrice), cents(newer), s.sentAfter(0, since), cents(got), held)
	})
}

// StaleSet checks that a read that read the row before a write's commit
// cannot store it after the write's delete. The reader misses and reads
// the old row; the checker stops it before its k-th Redis command after
// the query, for each k in turn (one scene each), and a write on another
// instance commits and finishes meanwhile. It catches a fill that is not
// refused after the delete: a plain SET (delete after commit and nothing
// more), a delete that leaves the lease, a lease checked with a GET and
// then a SET, a version compared as text, and a delayed second delete.
func StaleSet(h *harness.H, newShop NewShop) check.Verdict {
	for k := 1; k <= maxCommands; k++ {
		v, more := staleSet(h, newShop, k)
		if !v.Pass || !more {
			return v
		}
	}
	return check.Passed(fmt.Sprintf("a write committed before each of the reader's first %d commands after its query", maxCommands))
}

// staleSet is one scene of StaleSet. It reports false once the reader
// sends fewer than k commands after its query.
func staleSet(h *harness.H, newShop NewShop, k int) (check.Verdict, bool) {
	s, err := newScene(h, newShop, 2, fleet.HoldCalls(1), fleet.HoldCalls())
	if err != nil {
		return fleet.Unreachable(err), false
	}
	defer s.Close()
	r := s.Read(0)
	if err := s.Settle(); err != nil {
		return stuckVerdict(err), false
	}
	if s.reads.Calls() == 0 {
		return s.neverRead(), false
	}
	// Shop-1 is slow, not dead: its lease must not age while it is held.
	if err := s.KeepAlive(); err != nil {
		return fleet.Unreachable(err), false
	}
	since := len(s.taps[0].Log())
	stop := s.taps[0].Hold(fleet.Nth(k))
	defer stop.Release()
	s.reads.Gate(1).Open()
	if err := s.Drive(func() bool { return stop.Reached() || r.Done() }, patience); err != nil {
		return waitVerdict(err, "shop-1's visitor was"), false
	}
	if !stop.Reached() {
		return check.Passed(fmt.Sprintf("a write committed before each command the reader sent after its query: %s", fleet.Count(k-1, "scene"))), false
	}
	before := s.Truth()
	w := s.Write(1, newPrice)
	if err := s.Drive(w.Done, patience); err != nil {
		return waitVerdict(err, "shop-2's write, while shop-1's visitor was stopped, was"), false
	}
	if v := wrote(w, "shop-2's write"); !v.Pass {
		return v, false
	}
	stop.Release()
	if err := s.Drive(r.Done, patience); err != nil {
		return waitVerdict(err, "shop-1's visitor was"), false
	}
	if v := gotOne(r, "shop-1's visitor", oldPrice, newPrice); !v.Pass {
		return v, false
	}
	held := s.Cached()
	after := s.Truth()
	v := s.served(fmt.Sprintf("write committed before the reader's command %d after its query", k), func(got int) string {
		return fmt.Sprintf("shop-1's visitor missed and read the row (%s, version %d); before its command %d after the "+
			"query, shop-2's write committed %s (version %d) and finished. Then shop-1 sent: %s. A visitor after that got "+
			"%s: the stale set. A fill must be refused once a write has committed since its read: take a lease on the miss, "+
			"end it with the write's delete, and store the fill only if the lease is still yours, in one step (a Lua "+
			"script); or compare the row's version as a number. Redis held: %s",
			cents(before.Price), before.Version, k, cents(after.Price), after.Version, s.sentAfter(0, since), cents(got), held)
	})
	return v, v.Pass
}

// SlowLeader checks that a filler whose lease expired, while a new filler
// took over after a write, cannot store what it read. Shop-1's reader
// reads the old row and is held there, and Redis fails every command
// shop-1 sends meanwhile, so that its renewals fail and its lease lapses
// (the checker moves the clock, a step at a time, until Redis holds none
// of its keys, or maxLease has passed). Then a write commits; shop-3's
// reader misses, takes the lease and reads the new row, and is held in
// turn; and shop-1's reader goes on, Redis answering it again. It catches
// a lease token that is the same for every filler, and a fill that checks
// only that some lease exists. A filler that gives up its read before its
// lease lapses brings no slow fill: the check says it was not staged.
func SlowLeader(h *harness.H, newShop NewShop) check.Verdict {
	s, err := newScene(h, newShop, 3, fleet.HoldCalls(1, 2), fleet.HoldCalls())
	if err != nil {
		return fleet.Unreachable(err)
	}
	defer s.Close()
	// going is set while shop-1's held read is let go: the read hook's
	// Then runs only for a read still wanted when its gate opens.
	var going, delivered atomic.Bool
	s.reads.Then = func(ctx context.Context, _ string) error {
		if going.Load() {
			delivered.Store(true)
		}
		return nil
	}
	r1 := s.Read(0)
	if err := s.Settle(); err != nil {
		return stuckVerdict(err)
	}
	if s.reads.Calls() == 0 {
		return s.neverRead()
	}
	var refusing atomic.Bool
	refusing.Store(true)
	s.taps[0].Fail(func(c fleet.Command) bool { return len(c.Keys) > 0 && refusing.Load() }, errRedis, -1)
	old := s.Truth()
	lapsed, err := s.lapse(maxLease + 10*time.Millisecond)
	if err != nil {
		return stuckVerdict(err)
	}
	if v := s.WriteDone(1, newPrice); !v.Pass {
		return v
	}
	r2 := s.Read(2)
	if err := s.Drive(func() bool { return s.reads.Calls() >= 2 || r2.Done() }, patience); err != nil {
		return waitVerdict(err, "shop-3's visitor, after the write, was")
	}
	heldR2 := s.reads.Calls() >= 2
	if o := r2.Outcomes()[0]; !heldR2 && (!r2.Done() || o.Err != nil || o.Panic != "") {
		return check.Failed("", fmt.Sprintf("shop-1's visitor was still reading, and Redis had refused its every command for %v "+
			"(its lease's renewals too); after a write, shop-3's visitor found Redis empty and did not read the row (it got %s). "+
			"A lease lives at most %v: past it, another visitor takes over", lapsed, describe(o), maxLease))
	}
	if heldR2 {
		// Shop-3 is slow, not dead: its lease must not age while shop-1 goes on.
		if err := s.KeepAlive(); err != nil {
			return fleet.Unreachable(err)
		}
	}
	refusing.Store(false)
	going.Store(true)
	s.reads.Gate(1).Open()
	if err := s.Drive(r1.Done, patience); err != nil {
		return waitVerdict(err, "shop-1's visitor, whose lease had expired, was")
	}
	going.Store(false)
	s.reads.Gate(2).Open()
	if err := s.Drive(r2.Done, patience); err != nil {
		return waitVerdict(err, "shop-3's visitor was")
	}
	if !delivered.Load() {
		return check.Skipped(fmt.Sprintf("not staged: shop-1's visitor gave up its read of the row (its context ended) within the "+
			"%v the checker waited for its lease to lapse, so no slow fill came to be refused (slow-read stages a write "+
			"overtaking a read that is still wanted)", lapsed))
	}
	held := s.Cached()
	v := s.served(fmt.Sprintf("a slow filler whose lease lapsed after %v, and another took over", lapsed), func(got int) string {
		return fmt.Sprintf("shop-1's visitor read the row (%s, version %d) and stalled; Redis refused its renewals, and its "+
			"lease lapsed after %v; a write committed %s, and shop-3's visitor came for the price%s. Then shop-1 filled with "+
			"what it had read, and it was stored: a visitor after that got %s. A fill must carry its own lease's token, "+
			"different for every lease, and be refused when the lease holds another (the slow leader's CONFLICT): then it "+
			"reads again. Redis held: %s",
			cents(old.Price), old.Version, lapsed, cents(newPrice), map[bool]string{true: ", read the new row and was held there while shop-1 went on", false: " and got it"}[heldR2], cents(got), held)
	})
	if !v.Pass {
		return v
	}
	if v := gotOne(r2, "shop-3's visitor, after the write,", newPrice); !v.Pass {
		return v
	}
	return v
}

// lapse moves the clocks a step at a time until Redis holds no key, as
// when the only key is a lease whose renewals fail, or until limit has
// passed, and returns how long it took.
func (s *scene) lapse(limit time.Duration) (time.Duration, error) {
	const step = 250 * time.Millisecond
	var passed time.Duration
	for passed < limit {
		keys, err := s.World.Keys(s.H.Context())
		if err != nil {
			return passed, err
		}
		if len(keys) == 0 {
			break
		}
		d := min(step, limit-passed)
		if err := s.Elapse(d); err != nil {
			return passed, err
		}
		passed += d
	}
	return passed, nil
}

// LeaseCoalesces checks that while one filler holds the lease, nobody else
// reads the row, and that the others are served by its fill; and that a
// visitor waiting for a filler that died comes back within a bound. It
// catches a cache with no lease, losers that read anyway, and a wait with
// no bound.
func LeaseCoalesces(h *harness.H, newShop NewShop) check.Verdict {
	const perInstance = 5
	reads := fleet.HoldEvery()
	s, err := newScene(h, newShop, 3, reads, fleet.HoldCalls())
	if err != nil {
		return fleet.Unreachable(err)
	}
	defer s.Close()
	first := s.Read(0)
	if err := s.Settle(); err != nil {
		return stuckVerdict(err)
	}
	if s.reads.Calls() == 0 {
		return s.neverRead()
	}
	if err := s.KeepAlive(); err != nil { // the filler is slow, not dead
		return fleet.Unreachable(err)
	}
	var others []*harness.Crowd[int]
	for i := range s.shops {
		others = append(others, s.Reads(i, perInstance))
	}
	// The read takes its time: the shops' clock, and Redis's, move on while
	// shop-1's read is held, and the others poll, retry or give up.
	if err := s.Elapse(rebuild); err != nil {
		return stuckVerdict(err)
	}
	reads.OpenAll()
	err = s.Drive(func() bool { return first.Done() && fleet.AllDone(others) }, patience)
	n := s.RowReads()
	figure := fmt.Sprintf("%s for %d visitors on %d instances", fleet.Count(n, "read"), perInstance*len(s.shops)+1, len(s.shops))
	if n > 1 {
		return check.Failed(figure, fmt.Sprintf("while shop-1's visitor read the row (%v), %d more reads: the others must "+
			"find the lease taken and wait for its fill (polling Redis, within a budget), not read the row themselves. "+
			"A lease stops the stampede as well as the stale set", rebuild, n-1))
	}
	if err != nil {
		return waitVerdict(err, "the visitors were")
	}
	for _, c := range append(others, first) {
		if v := gotOne(c, "a visitor who waited for the fill", oldPrice); !v.Pass {
			return check.Failed(figure, v.Message+fmt.Sprintf(" (the fill came after a read of %v: a wait must outlast a healthy read)", rebuild))
		}
	}
	if v := deadFiller(h, newShop); !v.Pass {
		return v
	}
	return check.Passed(figure)
}

// deadFiller is the second scene of LeaseCoalesces: shop-1's filler never
// comes back, and shop-2's visitor must return within maxLease plus a few
// seconds of the shops' clock, with the price (it took over once the lease
// expired) or with an error.
func deadFiller(h *harness.H, newShop NewShop) check.Verdict {
	s, err := newScene(h, newShop, 2, fleet.HoldCalls(1), fleet.HoldCalls())
	if err != nil {
		return fleet.Unreachable(err)
	}
	defer s.Close()
	s.Read(0)
	if err := s.Settle(); err != nil {
		return stuckVerdict(err)
	}
	waiter := s.Read(1)
	limit := maxLease + 5*time.Second
	err = s.Drive(waiter.Done, limit)
	if errors.Is(err, fleet.ErrNoBound) {
		return check.Failed(fmt.Sprintf("still waiting after %v", limit), fmt.Sprintf("shop-1's filler died holding its "+
			"lease; shop-2's visitor was still waiting after %v of the shops' clock. The wait needs a bound: past a "+
			"budget (a second or so) return an error, or take the lease over once it has expired; and the lease needs a "+
			"time to live", limit))
	}
	if err != nil {
		return stuckVerdict(err)
	}
	o := waiter.Outcomes()[0]
	switch {
	case o.Panic != "":
		return check.Failed("", "a visitor's call panicked: "+o.Panic)
	case o.Err == nil && o.Value != oldPrice:
		return check.Failed("", fmt.Sprintf("shop-1's filler died; shop-2's visitor got %s, which is not the price (%s)",
			cents(o.Value), cents(oldPrice)))
	}
	return check.Passed("")
}

// comeBackInfo: the visitors of one instance, refused together, are told
// to come back at different moments.
var comeBackInfo = check.Info{ID: "come-back", Name: "visitors refused together are told different moments to come back (a jittered Retry-After)",
	Catches: "a fixed Retry-After, one drawn once (per process, per instance or per flight) and handed to every visitor it refuses, " +
		"an error that does not say when to come back, and delays from a generator with a fixed seed (two processes hand out the same ones)",
	Apart: fleet.ComeBackApart}

// ComeBack checks that visitors refused together are not all told to come
// back at the same moment: shop-1's filler holds the lease and its read
// never ends (its lease kept alive, as a paused instance's is), and
// fleet.ComeBackRefused visitors, half on shop-2 and half on shop-3, wait
// out their budget. Each must get a *TryAgain, their delays must be spread
// (fleet.ComeBacks), and the two instances must not hand out the same ones
// (fleet.ApartDraws). It catches a fixed Retry-After, a delay shared by a
// flight's visitors, a jitter too narrow, and generators seeded alike,
// per instance or (the grader plays it in two processes and compares
// their delays: fleet.ComeBackApart) per process.
func ComeBack(h *harness.H, newShop NewShop) check.Verdict {
	s, err := newScene(h, newShop, 3, fleet.HoldCalls(1), fleet.HoldCalls())
	if err != nil {
		return fleet.Unreachable(err)
	}
	defer s.Close()
	s.Read(0)
	if err := s.Settle(); err != nil {
		return stuckVerdict(err)
	}
	if s.RowReads() == 0 {
		return s.neverRead()
	}
	if err := s.KeepAlive(); err != nil {
		return fleet.Unreachable(err)
	}
	half := fleet.ComeBackRefused / 2
	groups := []*harness.Crowd[int]{s.Reads(1, half), s.Reads(2, half)}
	err = s.Drive(func() bool { return fleet.AllDone(groups) }, maxLease+5*time.Second)
	if n := s.RowReads(); n > 1 {
		return check.Failed(fleet.Count(n, "read"), "shop-2's and shop-3's visitors read the row while shop-1 held the lease, so nobody was "+
			"refused: they wait for the fill, and past their budget answer \"try again\" (see lease-coalesces)")
	}
	if errors.Is(err, fleet.ErrNoBound) {
		return check.Failed(fmt.Sprintf("still waiting after %v", maxLease+5*time.Second), "shop-1 held the lease and never "+
			"filled, and the other instances' visitors were still waiting: past a budget (a second or so) return a *TryAgain")
	}
	if err != nil {
		return stuckVerdict(err)
	}
	return fleet.ComeBackVerdict("shop-1 held the lease and never filled", groups[0], groups[1])
}

// EveryKeyExpires checks that every key the shop writes has a time to live
// from the moment it is written, and that a write whose instance dies
// between its commit and its delete leaves the old price for at most a
// minute. It catches a price or a lease stored with no time to live, or
// given one by a second command, and a price that lives too long.
func EveryKeyExpires(h *harness.H, newShop NewShop) check.Verdict {
	s, err := newScene(h, newShop, 3, fleet.HoldCalls(), fleet.HoldCalls(1))
	if err != nil {
		return fleet.Unreachable(err)
	}
	defer s.Close()
	untimedSeen := s.World.WatchTTLs(s.taps)
	warm := s.Read(2)
	if err := s.Drive(warm.Done, patience); err != nil {
		return waitVerdict(err, "the first visitor, with Redis empty, was")
	}
	warmKeys, err := s.World.Keys(h.Context())
	if err != nil {
		return fleet.Unreachable(err)
	}
	w := s.Write(0, newPrice)
	if err := s.Drive(func() bool { return s.commits.Calls() > 0 || w.Done() }, patience); err != nil {
		return waitVerdict(err, "shop-1's write, before its commit, was")
	}
	crash := s.taps[0].Hold(fleet.Nth(1)) // shop-1 dies right after its commit
	defer crash.Release()
	s.commits.Gate(1).Open()
	if err := s.Drive(func() bool { return crash.Reached() || w.Done() }, patience); err != nil {
		return waitVerdict(err, "shop-1's write was")
	}
	during := s.Cached()
	keys, err := s.World.Keys(h.Context())
	if err != nil {
		return fleet.Unreachable(err)
	}
	for _, u := range untimedSeen() {
		return check.Failed(u.Key+" with no time to live", fmt.Sprintf("shop-%d sent %q, and right after it %s had no "+
			"time to live: if the instance dies there, the key never expires, and a price that never expires is wrong "+
			"for good after the next write whose delete is lost. Write the key and its time to live in one step: "+
			"SET ... PX, or one script", u.Shop+1, u.Sent, u.Key))
	}
	var longest time.Duration
	for _, k := range append(warmKeys, keys...) {
		if k.Forever {
			return check.Failed(k.String(), fmt.Sprintf("%s has no time to live: a key that never expires outlives "+
				"whoever wrote it, and the time to live is the floor of correctness", k.Name))
		}
		longest = max(longest, k.TTL)
	}
	// The instance is dead: its delete never comes. Let a minute pass.
	if err := s.Elapse(maxPriceTTL); err != nil {
		return stuckVerdict(err)
	}
	figure := fmt.Sprintf("longest time to live %v", longest.Round(time.Millisecond))
	o, err := s.Fresh()
	if err != nil {
		return waitVerdict(err, "a visitor a minute after the crash was")
	}
	switch {
	case o.Panic != "":
		return check.Failed(figure, "a visitor's call panicked: "+o.Panic)
	case o.Err != nil:
		return check.Failed(figure, fmt.Sprintf("a visitor a minute after the crash got an error: %v", o.Err))
	case o.Value != s.Truth().Price:
		return check.Failed(figure, fmt.Sprintf("shop-1 died between its commit and its delete (Redis then held: %s). "+
			"A minute later a visitor still got %s, the price before the write: a price's time to live bounds how "+
			"long a lost delete serves the old price; keep it within %v (the reference uses 30 s)",
			during, cents(o.Value), maxPriceTTL))
	}
	return check.Passed(figure + "; a minute after a crash between commit and delete, the new price")
}

// Busy runs readers and writers of three books on three instances, so that
// the race detector sees every access to the shops' state.
func Busy(h *harness.H, newShop NewShop) check.Verdict {
	s, err := newScene(h, newShop, 3, fleet.HoldCalls(), fleet.HoldCalls())
	if err != nil {
		return fleet.Unreachable(err)
	}
	defer s.Close()
	return s.PriceTraffic(func(i int) fleet.Pricer { return s.shops[i] },
		func(c *harness.Crowd[int]) { s.crowds = append(s.crowds, c) }, patience)
}

// served sends a visitor to a new instance and holds what it gets to the
// committed price. why explains a stale price.
func (s *scene) served(figure string, why func(got int) string) check.Verdict {
	o, err := s.Fresh()
	if err != nil {
		return waitVerdict(err, "a visitor after the scene was")
	}
	truth := s.Truth()
	switch {
	case o.Panic != "":
		return check.Failed(figure, "a visitor's call panicked: "+o.Panic)
	case o.Err != nil:
		return check.Failed(figure, fmt.Sprintf("a visitor after the scene, with nothing else going on, got an error: %v", o.Err))
	case o.Value != truth.Price:
		return check.Failed(figure, why(o.Value))
	}
	return check.Passed(figure)
}
