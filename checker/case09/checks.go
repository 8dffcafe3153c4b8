package case09

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"stampede/checker/case06"
	"stampede/checker/check"
	"stampede/checker/fleet"
	"stampede/checker/harness"
	"stampede/checker/shelves"
	"stampede/shop/catalog"
)

// The story's numbers, which the scenes are built on.
const (
	instances = 4
	// logical is the logical expiry the chapter asks for: fresh for 30 s.
	logical = 30 * time.Second
	// physical is Redis's expiry, EX 60: no value older is ever served.
	physical = 60 * time.Second
	// stale is a moment inside the grace window, just past the logical
	// expiry.
	stale = logical + time.Second
	// maxBudget is the longest a reader who found nothing may wait before
	// it answers "try again" (case 6's bound).
	maxBudget = 10 * time.Second
)

// NoWait checks that readers who find a value past its logical expiry but
// inside its physical one all return while the rebuild is held at the
// database: nobody, not even the reader who started the rebuild, waits
// for it. It catches case 6's lock alone (every loser waits), a rebuild
// run inline by the reader who wins the lock, and a grace window too short
// to reach.
func NoWait(h *harness.H, newShop NewShop) check.Verdict {
	sc, fail := filledScene(h, newShop, instances)
	if sc == nil {
		return fail
	}
	defer sc.Close()
	var err error
	if err := sc.until(stale); err != nil {
		return case06.StuckVerdict(err)
	}
	const per = 10
	sc.db.Hold()
	crowd := sc.burst(per)
	err = sc.Settle()
	if err != nil {
		return case06.StuckVerdict(err)
	}
	outs := crowd.Outcomes()
	back := returned(outs)
	n := instances * per
	figure := fmt.Sprintf("%d of %d readers served at %s with the rebuild held", back, n, sc.at(stale))
	if back < n {
		return check.Failed(figure, fmt.Sprintf("the list was filled at %s; at %s, %v later, it is past its logical "+
			"expiry (%v) and inside its physical one (%v). %d readers were still waiting while the rebuild was held at "+
			"the database (%s). Serve the stale value at once, and let one rebuild run in the background: no reader, not "+
			"even the one who started it, waits for it", sc.at(0), sc.at(stale), stale, logical, physical, n-back,
			crowd.Where()))
	}
	if got, bad := lists(outs); bad != "" || got < n {
		if bad == "" {
			bad = fmt.Sprintf("%d readers got an error, such as %v", n-got, firstErr(outs))
		}
		return check.Failed(figure, "inside the grace window every reader gets the list: "+bad)
	}
	sc.db.Open()
	if err := sc.Drive(crowd.Done, case06.Patience); err != nil {
		return case06.StuckVerdict(err)
	}
	return check.Passed(figure)
}

// OneRebuild checks, through three expiries, that each expiry makes one
// source read for the whole fleet: a burst on every instance after the
// logical expiry makes one rebuild, and a burst on the fresh value makes
// none. It catches a rebuild started by every stale reader, an
// in-process single-flight with no lock in Redis (one rebuild per
// instance), and a logical expiry read from the wall clock (no rebuild
// at all).
func OneRebuild(h *harness.H, newShop NewShop) check.Verdict {
	sc, fail := filledScene(h, newShop, instances)
	if sc == nil {
		return fail
	}
	defer sc.Close()
	const per, expiries = 10, 3
	var figure []string
	for k := 1; k <= expiries; k++ {
		base := sc.Reads()
		at := time.Duration(k) * stale
		// A refresh ahead of the expiry, by a reader or a goroutine of
		// the shop's, may land while the time passes: it is this expiry's
		// one rebuild.
		if err := sc.until(at); err != nil {
			return case06.StuckVerdict(err)
		}
		sc.db.Hold()
		crowd := sc.burst(per)
		err := sc.Settle()
		if err != nil {
			return case06.StuckVerdict(err)
		}
		if reads := sc.Reads() - base; reads > 1 {
			return check.Failed(count(reads, "read"), fmt.Sprintf("at %s the list was past its logical expiry, and a burst "+
				"of %d readers on each of %d instances started %d rebuilds: %s", sc.at(at), per, instances, reads,
				tooMany(reads)))
		}
		sc.db.Open()
		if err := sc.Drive(crowd.Done, case06.Patience); err != nil {
			return case06.WaitVerdict(err, "the burst's readers were")
		}
		if v := shelves.AllGot(crowd.Outcomes(), catalog.Books(catalog.Bestsellers)); !v.Pass {
			return check.Failed("", fmt.Sprintf("the burst at %s: %s", sc.at(at), v.Message))
		}
		// A second later the list is fresh: nobody rebuilds it.
		if err := sc.until(at + time.Second); err != nil {
			return case06.StuckVerdict(err)
		}
		again := sc.burst(5)
		if err := sc.Drive(again.Done, case06.Patience); err != nil {
			return case06.WaitVerdict(err, "the readers a second later were")
		}
		reads := sc.Reads() - base
		switch {
		case reads > 1:
			return check.Failed(count(reads, "read"), fmt.Sprintf("at %s the rebuild had landed, and a burst a second later "+
				"rebuilt again (%d reads for one expiry): a fresh value is served as it is, until its logical expiry", sc.at(at),
				reads))
		case reads == 0:
			return check.Failed("0 reads", fmt.Sprintf("the list stored at %s was still served at %s, past its logical "+
				"expiry, and nothing rebuilt it. Judge the list's age by Redis's clock (its time to live, "+
				"PTTL: 30 s or less left of EX 60 is stale), and start a rebuild when a reader finds it past", sc.at(at-stale), sc.at(at+time.Second)))
		}
		figure = append(figure, "1")
	}
	return check.Passed(fmt.Sprintf("rebuilds per expiry for %d instances x %d readers: %s", instances, per,
		strings.Join(figure, ", ")))
}

// tooMany explains a burst's extra rebuilds.
func tooMany(reads int) string {
	if reads <= instances {
		return "up to one per instance. An in-process single-flight keeps an instance to one rebuild; the fleet needs " +
			"one, chosen by the lock in Redis (SET lock:<shelf> <token> NX PX <ms>), and the losers serve the stale value"
	}
	return "every reader who found the list stale started one. Take the fleet's lock first (SET ... NX PX), and let only " +
		"its winner rebuild"
}

// Bounded checks both ends of the grace window with every rebuild held at
// the database: once the value is past its logical expiry a rebuild is
// under way, and once it is past its physical expiry nobody is served it,
// whatever they wait for. It catches a stale copy kept in the instance's
// memory and served when Redis has nothing, and a value kept in Redis
// longer than its physical expiry.
func Bounded(h *harness.H, newShop NewShop) check.Verdict {
	sc, fail := filledScene(h, newShop, 2)
	if sc == nil {
		return fail
	}
	defer sc.Close()
	sc.db.Hold() // the source hangs: no rebuild lands from now on
	if err := sc.until(stale); err != nil {
		return case06.StuckVerdict(err)
	}
	sc.visit(0, 1)
	sc.visit(1, 1)
	if err := sc.settled(); err != nil {
		return case06.StuckVerdict(err)
	}
	if sc.Reads() < 2 {
		return check.Failed("no rebuild", fmt.Sprintf("at %s the list was past its logical expiry and two readers came; "+
			"no rebuild started. A stale value is served only while its rebuild runs: judge its age by its time to "+
			"live in Redis (PTTL), and start the rebuild", sc.at(stale)))
	}
	past := physical + 500*time.Millisecond
	if err := sc.until(past); err != nil {
		return case06.StuckVerdict(err)
	}
	late := sc.burst(3)
	// Let the late readers wait and give up, on their own timers: whatever
	// they return while no rebuild lands is the old list or an error.
	if err := sc.Elapse(maxBudget); err != nil {
		return case06.StuckVerdict(err)
	}
	served, bad := lists(late.Outcomes())
	figure := fmt.Sprintf("%d of %d readers served after the physical expiry with no rebuild landed", served, 2*3)
	if bad != "" {
		return check.Failed(figure, bad)
	}
	if served > 0 {
		return check.Failed(figure, fmt.Sprintf("the list was filled at %s and every rebuild after it hung; at %s, past its "+
			"physical expiry (%v), %d readers were served it anyway. Nothing older than the physical expiry is served: no "+
			"copy in the instance's memory, no key that outlives EX 60", sc.at(0), sc.at(past), physical, served))
	}
	return check.Passed(figure)
}

// AfterDelete checks that once the write path has deleted the shelf, no
// reader on any instance is served the old list: fresh or in its grace
// window, a deleted value is gone. It catches a grace window kept as a
// second key that the delete misses, a copy in the instance's memory, and
// an invalidation that only marks the value stale.
func AfterDelete(h *harness.H, newShop NewShop) check.Verdict {
	sc, fail := filledScene(h, newShop, instances)
	if sc == nil {
		return fail
	}
	defer sc.Close()
	for _, when := range []struct {
		at   time.Duration
		what string
	}{{10 * time.Second, "fresh"}, {stale + 10*time.Second, "in its grace window"}} {
		if err := sc.until(when.at); err != nil {
			return case06.StuckVerdict(err)
		}
		// Every instance serves the list once before the delete, so that
		// a copy an instance keeps of what it served is there to be caught.
		seen := sc.burst(1)
		if err := sc.Drive(seen.Done, case06.Patience); err != nil {
			return case06.WaitVerdict(err, fmt.Sprintf("at %s, before the delete, the readers were", sc.at(when.at)))
		}
		if got, bad := lists(seen.Outcomes()); bad != "" || got < instances {
			return check.Failed("", fmt.Sprintf("at %s, with the list %s, before any delete, %d of %d readers got it (%s)",
				sc.at(when.at), when.what, got, instances, bad))
		}
		// Let any rebuild a reader started finish first: the delete
		// comes after the last write.
		if err := sc.settled(); err != nil {
			return case06.StuckVerdict(err)
		}
		if err := sc.shops[0].Invalidate(h.Context(), catalog.Bestsellers); err != nil {
			return check.Failed("", fmt.Sprintf("Invalidate on shop-1 at %s: %v", sc.at(when.at), err))
		}
		sc.db.Hold()
		crowd := sc.burst(2)
		// The readers wait, or give up on their own timers; no query
		// after the delete lands meanwhile.
		if err := sc.Elapse(maxBudget); err != nil {
			return case06.StuckVerdict(err)
		}
		served, bad := lists(crowd.Outcomes())
		if bad != "" {
			return check.Failed("", bad)
		}
		if served > 0 {
			return check.Failed(fmt.Sprintf("%d of %d readers served the deleted list", served, 2*instances),
				fmt.Sprintf("at %s, with the list %s, shop-1's Invalidate deleted it after a change to the shelf; %d readers "+
					"were served the old list before any query after the delete had returned. The grace window covers "+
					"expiry, not invalidation: delete every key that holds the list (one key holds both expiries), and keep "+
					"no copy in memory", sc.at(when.at), when.what, served))
		}
		sc.db.Open()
		if err := sc.Drive(crowd.Done, case06.Patience); err != nil {
			return case06.WaitVerdict(err, "after the delete, the readers were")
		}
		// Readers of this burst may have given up, and a rebuild given up
		// on the hung database may keep its lock as the fleet's backoff,
		// for as long as it may live (a renewed one, past its query's
		// deadline of up to 10 s): once it is gone, the next reader gets
		// the fresh list.
		if err := sc.Elapse(case06.LongestWork); err != nil {
			return case06.StuckVerdict(err)
		}
		next := sc.visit(1, 1)
		if err := sc.Drive(next.Done, case06.Patience); err != nil {
			return case06.WaitVerdict(err, "after the delete and the rebuild, the next reader was")
		}
		if v := shelves.AllGot(next.Outcomes(), catalog.Books(catalog.Bestsellers)); !v.Pass {
			return check.Failed("", "after the delete and the rebuild, the next reader: "+v.Message)
		}
		// The next scene counts its times from this refill.
		sc.filled = sc.Clock.Now()
	}
	return check.Passed(fmt.Sprintf("deleted fresh and in its grace window: 0 of %d readers served the old list", 2*instances))
}

// Detached checks that a rebuild started by a reader who leaves at once
// still lands: the reader's context ends when it leaves, and the rebuild
// must not run on it. It catches a rebuild started on the request's
// context.
func Detached(h *harness.H, newShop NewShop) check.Verdict {
	sc, fail := filledScene(h, newShop, 2)
	if sc == nil {
		return fail
	}
	defer sc.Close()
	var err error
	if err := sc.until(stale); err != nil {
		return case06.StuckVerdict(err)
	}
	sc.db.Hold()
	first := sc.visit(0, 1)
	err = sc.Settle()
	if err != nil {
		return case06.StuckVerdict(err)
	}
	left := first.Done() // its context has ended
	sc.db.Open()
	if err := sc.Drive(first.Done, case06.Patience); err != nil {
		return case06.WaitVerdict(err, "the reader who found the list stale was")
	}
	if sc.Reads() < 2 {
		return check.Failed("no rebuild", fmt.Sprintf("at %s a reader found the list past its logical expiry, and no rebuild "+
			"started", sc.at(stale)))
	}
	// Ten seconds on, the list rebuilt at 09:00:31 is still fresh, and a
	// lock its rebuild left behind has expired.
	later := stale + maxBudget
	if err := sc.until(later); err != nil {
		return case06.StuckVerdict(err)
	}
	base := sc.Reads()
	next := sc.burst(1)
	if err := sc.Drive(next.Done, case06.Patience); err != nil {
		return case06.WaitVerdict(err, "the readers ten seconds later were")
	}
	if err := sc.settled(); err != nil {
		return case06.StuckVerdict(err)
	}
	if extra := sc.Reads() - base; extra > 0 {
		why := "the rebuild did not land"
		if left {
			why = "the reader had left before the rebuild's query returned, and its context had ended with it; the rebuild " +
				"did not land"
		}
		return check.Failed(count(base, "read"), fmt.Sprintf("at %s a reader found the list stale and started a rebuild; "+
			"%s, so at %s the list was still stale and was rebuilt again (%s). Run the rebuild on a context of its own, "+
			"context.WithoutCancel(ctx), not the visitor's", sc.at(stale), why, sc.at(later), count(extra, "more read")))
	}
	if v := coldDetached(h, newShop); !v.Pass {
		return v
	}
	if !left {
		return check.Passed(fmt.Sprintf("the reader stayed for its rebuild, which landed (%s); a cold flight outlived "+
			"the reader who started it", count(base, "read")))
	}
	return check.Passed(fmt.Sprintf("the reader left at once; its rebuild landed (%s); a cold flight outlived the "+
		"reader who started it", count(base, "read")))
}

// coldDetached is Detached's cold miss: with Redis empty, shop-1's first
// reader starts its flight, whose query is held; a second reader of shop-1
// joins it; the first leaves, and its context ends. Then the query
// answers, and the second reader must get the list. It catches a flight
// run on its first reader's context, or under a deadline made in the
// reader's call and cancelled when that call returns.
func coldDetached(h *harness.H, newShop NewShop) check.Verdict {
	sc, err := newScene(h, newShop, 1)
	if err != nil {
		return fleet.Unreachable(err)
	}
	defer sc.Close()
	sc.db.Hold()
	var leave context.CancelFunc
	ready := make(chan struct{})
	first := sc.VisitWith(1, func(ctx context.Context, _ int) ([]string, error) {
		ctx, leave = context.WithCancel(ctx)
		close(ready)
		defer leave()
		return sc.shops[0].Top(ctx, catalog.Bestsellers)
	})
	<-ready
	if err := sc.settled(); err != nil {
		return case06.StuckVerdict(err)
	}
	if n, _ := sc.db.Waiting(); n == 0 {
		return check.Failed("no query", "with Redis empty, shop-1's first reader sent the database no query")
	}
	second := sc.visit(0, 1)
	if err := sc.settled(); err != nil {
		return case06.StuckVerdict(err)
	}
	leave()
	if err := sc.Drive(first.Done, case06.Patience); err != nil {
		return case06.WaitVerdict(err, "with Redis empty, the first reader, who had left, was")
	}
	sc.db.Open()
	if err := sc.Drive(second.Done, case06.Patience); err != nil {
		return case06.WaitVerdict(err, "with Redis empty, the reader who joined the first one's flight was")
	}
	if v := shelves.AllGot(second.Outcomes(), catalog.Books(catalog.Bestsellers)); !v.Pass {
		return check.Failed("", fmt.Sprintf("with Redis empty, shop-1's first reader started the flight for the shelf "+
			"and a second reader joined it; the first left before the query answered, and the second: %s. The flight "+
			"outlives the reader who started it, since others wait for it: its context, and its deadline, are its own, "+
			"made inside the function the flight runs (clock.WithTimeout on context.WithoutCancel)", v.Message))
	}
	return check.Passed("")
}

// FailedRebuild checks what a failing source does to the grace window:
// every rebuild fails, and the stale list keeps being served until its
// physical expiry; after it, readers get an error, promptly; and once the
// source is back, the next reader gets the list. It catches a failed
// rebuild that deletes the stale value, a failure written to Redis in
// its place, and a failure that blocks the next rebuild.
func FailedRebuild(h *harness.H, newShop NewShop) check.Verdict {
	sc, fail := filledScene(h, newShop, 2)
	if sc == nil {
		return fail
	}
	defer sc.Close()
	sc.db.Fail(errPrimaryDown)
	for _, at := range []time.Duration{stale, 45 * time.Second, 55 * time.Second} {
		if err := sc.until(at); err != nil {
			return case06.StuckVerdict(err)
		}
		crowd := sc.burst(2)
		if err := sc.Drive(crowd.Done, case06.Patience); err != nil {
			return case06.WaitVerdict(err, fmt.Sprintf("at %s, in the grace window with the source down, the readers were", sc.at(at)))
		}
		got, bad := lists(crowd.Outcomes())
		if bad != "" {
			return check.Failed("", bad)
		}
		if got < 4 {
			return check.Failed(fmt.Sprintf("%d of 4 readers served at %s", got, sc.at(at)), fmt.Sprintf("the source went "+
				"down after the fill at %s. At %s the list was stale but inside its physical expiry, and %d readers got an "+
				"error (%v) instead of it. A failed rebuild leaves the stale value in place, to be served until its physical "+
				"expiry, and writes nothing", sc.at(0), sc.at(at), 4-got, firstErr(crowd.Outcomes())))
		}
	}
	past := physical + time.Second
	if err := sc.until(past); err != nil {
		return case06.StuckVerdict(err)
	}
	crowd := sc.burst(2)
	if err := sc.Drive(crowd.Done, case06.Patience); err != nil {
		return case06.WaitVerdict(err, fmt.Sprintf("at %s, past the physical expiry with the source down, the readers were", sc.at(past)))
	}
	got, bad := lists(crowd.Outcomes())
	if bad != "" {
		return check.Failed("", bad)
	}
	if got > 0 {
		return check.Failed(fmt.Sprintf("%d of 4 readers served after the physical expiry", got), fmt.Sprintf("the source "+
			"was down; at %s, past the list's physical expiry, %d readers were served the old list. After it they get an error",
			sc.at(past), got))
	}
	// The source is back. A failure may be remembered as a backoff (the
	// reference keeps its lock until it expires), but no longer than the
	// longest lock case 6 accepts.
	sc.db.Fail(nil)
	if err := sc.Elapse(longestWork + 10*time.Millisecond); err != nil {
		return case06.StuckVerdict(err)
	}
	back := sc.visit(0, 1)
	if err := sc.Drive(back.Done, case06.Patience); err != nil {
		return case06.WaitVerdict(err, "once the source was back, the next reader was")
	}
	if v := shelves.AllGot(back.Outcomes(), catalog.Books(catalog.Bestsellers)); !v.Pass {
		return check.Failed("", fmt.Sprintf("the source was back at %s, and the next reader, %v later, did not get the "+
			"list: %s. A failure is not cached: write nothing, and remember it (a lock kept to expire, say) no longer "+
			"than the longest lock, %v", sc.at(past), longestWork+10*time.Millisecond, v.Message, longestWork))
	}
	return check.Passed(fmt.Sprintf("stale served until %s with the source down; then errors; then the list", sc.at(55*time.Second)))
}

// firstErr returns the first error among outcomes.
func firstErr(outs []harness.Outcome[[]string]) error {
	for _, o := range outs {
		if o.Returned && o.Err != nil {
			return o.Err
		}
	}
	return nil
}

// Busy runs readers of three shelves on three instances through a fill,
// an expiry with its background rebuild, a delete and a refill, so that
// the race detector sees every access to the shops' state.
func Busy(h *harness.H, newShop NewShop) check.Verdict {
	sc, err := newScene(h, newShop, 3)
	if err != nil {
		return fleet.Unreachable(err)
	}
	defer sc.Close()
	list := []string{catalog.Bestsellers, catalog.NewReleases, catalog.StaffPicks}
	wave := func(round int) error {
		c := sc.VisitWith(45, func(ctx context.Context, i int) ([]string, error) {
			ctx, leave := context.WithCancel(ctx)
			defer leave()
			return sc.shops[i%3].Top(ctx, list[(i/3+round)%3])
		})
		if err := sc.Drive(c.Done, case06.Patience); err != nil {
			return err
		}
		if p := c.Panicked(); p != "" {
			return errors.New("a visitor's call panicked: " + p)
		}
		return sc.settled()
	}
	steps := []func() error{
		func() error { return wave(0) },
		func() error { return wave(1) },
		func() error { return sc.Elapse(stale) },
		func() error { return wave(2) },
		func() error {
			for i, shelf := range list {
				if err := sc.shops[i].Invalidate(context.Background(), shelf); err != nil {
					return err
				}
			}
			return nil
		},
		func() error { return wave(3) },
	}
	for _, step := range steps {
		if err := step(); err != nil {
			var stuck *harness.Stuck
			if errors.As(err, &stuck) || errors.Is(err, fleet.ErrNoBound) {
				return case06.WaitVerdict(err, "the visitors were")
			}
			return check.Failed("", err.Error())
		}
	}
	return check.Passed("")
}

// EveryKeyExpires checks case 6's rule, that every key the fleet writes has
// a time to live, on a cold miss; then that a refresh of a stale list
// writes it with a new physical expiry. It catches a key with no expiry, a
// key given its expiry in a second command, and a refresh that writes
// with no expiry or keeps the old one (KEEPTTL), after which the list
// vanishes while it is still fresh.
func EveryKeyExpires(h *harness.H, newShop NewShop, cold case06.NewShop) check.Verdict {
	first := case06.EveryKeyExpires(h, cold)
	if !first.Pass {
		return first
	}
	ctx := h.Context()
	sc, fail := filledScene(h, newShop, 2)
	if sc == nil {
		return fail
	}
	defer sc.Close()
	before, err := sc.World.TTLs(ctx)
	if err != nil {
		return fleet.Unreachable(err)
	}
	var kept time.Duration // the longest time to live the fill gave, less the time to the refresh
	for _, ttl := range before {
		kept = max(kept, ttl-stale)
	}
	if err := sc.until(stale); err != nil {
		return case06.StuckVerdict(err)
	}
	sent := make([]int, len(sc.shops)) // each tap's log so far
	for i := range sc.shops {
		sent[i] = len(sc.Tap(i).Log())
	}
	crowd := sc.burst(2)
	if err := sc.Drive(crowd.Done, case06.Patience); err != nil {
		return case06.WaitVerdict(err, "the readers of the stale list were")
	}
	if err := sc.settled(); err != nil {
		return case06.StuckVerdict(err)
	}
	ttls, err := sc.World.TTLs(ctx)
	if err != nil {
		return fleet.Unreachable(err)
	}
	var longest time.Duration
	refreshed := false // a key of the fill written again, and Redis took it
	for i := range sc.shops {
		for _, c := range sc.Tap(i).Log()[sent[i]:] {
			for name, ttl := range before {
				// A key still there at the refresh (the list, not a lock),
				// written again and taken.
				if ttl > stale && c.Attempt([]string{name}) && !strings.HasPrefix(c.Said, "error") {
					refreshed = true
				}
			}
		}
	}
	for name, ttl := range ttls {
		if ttl < 0 {
			return check.Failed(name+" with no time to live", fmt.Sprintf("after the list went stale at %s and was "+
				"read, %s had no time to live: write the value with its physical expiry every time, SET ... EX 60",
				sc.at(stale), name))
		}
		longest = max(longest, ttl)
	}
	// Whether a refresh landed at all is for one-rebuild and detached to
	// say; a shop with no grace window (kept is 0 or less) has nothing
	// to renew.
	if refreshed && kept > 0 && longest <= kept+time.Second {
		return check.Failed(fmt.Sprintf("longest time to live %v after a refresh", longest.Round(time.Millisecond)),
			fmt.Sprintf("the list was refreshed by %s, and no key in Redis had more than %v left, as the first fill had "+
				"left it: the refresh kept the old physical expiry (KEEPTTL), so the list vanishes %v after the first "+
				"fill, fresh or not. A refresh writes the value with a new physical expiry, SET ... EX 60",
				sc.at(stale), longest.Round(time.Millisecond), physical))
	}
	return check.Passed(fmt.Sprintf("%s; after a refresh, the longest %v", first.Figure, longest.Round(time.Millisecond)))
}
