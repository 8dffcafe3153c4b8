package case10

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"stampede/checker/check"
	"stampede/checker/fleet"
	"stampede/checker/harness"
	"stampede/checker/point"
	"stampede/shop/catalog"
)

// oneWaitInfo is the check that an instance's visitors of one book share
// one wait, as cases 1 to 6 taught.
var oneWaitInfo = check.Info{
	ID: "one-wait",
	Name: "an instance's visitors waiting for one book share one wait: its Redis commands do not grow with its visitors, " +
		"one who leaves fails none of the others, and instances that missed together do not poll together",
	Catches: "a visitor that polls Redis on its own (21 visitors on one instance, 21 times the commands: " +
		"wrong/poll-per-visitor, the reference before this check), a shared wait run on its first visitor's context " +
		"(when that visitor leaves, the others get its error: wrong/flight-first-ctx), one wait for every book " +
		"(a visitor of another book waits for this one's fill: wrong/instance-lock), a wait that a visitor " +
		"joins after its last visitor has left (it gets the abandoned wait's error: wrong/flight-rejoin), a wait whose " +
		"budget runs out for a visitor who joined it a moment before (wrong/flight-budget-shared), a turn per book whose " +
		"holder reads on its own context, so that when the filler leaves its read is given up and done again " +
		"(wrong/channel-turn), a flight looked up and made in two critical sections, two visitors at one instant making " +
		"two (wrong/join-lookup-insert), jitter from a generator every instance seeds alike (wrong/jitter-fixed-seed), and polls " +
		"at a fixed period, so that instances that missed together ask Redis at the same instants for as long as " +
		"they wait (wrong/fixed-polls); and an abandoned flight that, ending, takes whatever flight is on the instance " +
		"off it, so that the next visitor starts a second one beside the live one (wrong/land-no-guard)",
}

const (
	// crowd is how many visitors wait on one instance in OneWait's second
	// scene: each polling on its own sends about crowd times the commands
	// of one.
	crowd = 21
	// holdFill is how long the filler's read is held while the others wait:
	// within their budget, long enough for about a dozen polls.
	holdFill = 600 * time.Millisecond
)

// OneWait checks that an instance's visitors of one book share one wait
// for the holder's fill. Alone, shop-2's visitor waits holdFill; then 21
// visitors do, the first of them leaving after 100 ms, and the instance's
// commands naming the book may be at most three times the lone visitor's
// and three per visitor more (a poll per visitor sends at least 21 times
// the lone one's: the separation holds for any poll period from 25 to 75
// ms). Meanwhile a visitor of another book, which nobody fills and whose
// row the database answers at once, must be served without the clock
// moving, and shop-3, whose visitor missed at
// the same instant as shop-2's first, must not poll at the same instants
// as shop-2 (fixed polls keep every one in step; jittered ones, drawn to
// the nanosecond or the millisecond, share few: at most 90% is allowed, and
// a millisecond's jitter shares more with a chance under 1e-9). A visitor
// who joins a wait 0.9 s old must not give up with it; when the first of
// four visitors of a fill leaves, its read must go on for the other three.
// Last, a visitor who comes as the last one of a wait leaves must not
// join it, and one who comes once the abandoned wait has ended must join
// the live one. And two visitors who miss at one instant in lockstep may try
// the lease no more often than the lone one (pairAttempts).
func OneWait(h *harness.H, newShop NewShop) check.Verdict {
	alone, first, v := visitorsCommands(h, newShop, 1, nil)
	if !v.Pass {
		return v
	}
	if v := pairAttempts(h, newShop, first); !v.Pass {
		return v
	}
	figure, v := crowdCommands(h, newShop, alone)
	if !v.Pass {
		return v
	}
	late, v := lateJoiner(h, newShop)
	if !v.Pass {
		return v
	}
	if v := fillerLeaves(h, newShop); !v.Pass {
		return v
	}
	rejoin, v := rejoinAfterLeave(h, newShop)
	if !v.Pass {
		return v
	}
	return check.Passed(figure + "; " + late + "; the first of four visitors of a fill left and its read went on; " + rejoin)
}

// visitorsCommands has n visitors of shop-2 miss the book at one instant
// while shop-1 holds the lease and reads (with schedule set, under it).
// It returns the commands naming the book shop-2 sends while shop-1 reads
// for holdFill, and its attempts at the lease at the instant they came,
// before the clock moves (see pairAttempts).
func visitorsCommands(h *harness.H, newShop NewShop, n int, schedule *point.Schedule) (commands, attempts int, v check.Verdict) {
	s, err := newScene(h, newShop, 2, fleet.HoldEvery(), fleet.HoldCalls())
	if err != nil {
		return 0, 0, fleet.Unreachable(err)
	}
	defer s.Close()
	filler, v := s.holdFiller(1)
	if !v.Pass {
		return 0, 0, v
	}
	since := len(s.taps[1].Log())
	var waiters *harness.Crowd[int]
	come := func() check.Verdict {
		waiters = s.Reads(1, n)
		if err := s.Settle(); err != nil {
			return stuckVerdict(err)
		}
		return check.Passed("")
	}
	if schedule != nil {
		v = h.Under(schedule, come)
	} else {
		v = come()
	}
	if !v.Pass {
		return 0, 0, v
	}
	attempts = leaseAttempts(s.taps[1], since)
	if n > 1 {
		// The pair's scene ends here: what it counts is the instant.
		s.reads.OpenAll()
		if err := s.Drive(func() bool { return filler.Done() && waiters.Done() }, patience); err != nil {
			return 0, 0, waitVerdict(err, "the visitors were")
		}
		return 0, attempts, check.Passed("")
	}
	waiter := waiters
	if err := s.Elapse(holdFill); err != nil {
		return 0, 0, stuckVerdict(err)
	}
	commands = bookCommands(s.taps[1], since)
	if s.reads.Calls() > 1 {
		return 0, 0, check.Failed("", "shop-2's visitor read the row while shop-1 held the lease and read it: there was no wait to "+
			"share. A visitor who finds the lease taken waits for the holder's fill (see lease-coalesces)")
	}
	s.reads.OpenAll()
	if err := s.Drive(func() bool { return filler.Done() && waiter.Done() }, patience); err != nil {
		return 0, 0, waitVerdict(err, "the visitors were")
	}
	if v := gotOne(waiter, "shop-2's visitor, who waited for shop-1's fill", oldPrice); !v.Pass {
		return 0, 0, v
	}
	if commands == 0 {
		return 0, 0, check.Failed("", "shop-2's visitor sent Redis no command naming the book while shop-1 read the row")
	}
	return commands, attempts, check.Passed("")
}

// pairAttempts plays two visitors of shop-2 who miss the book at one
// instant, while shop-1 holds the lease, taking turns one statement each
// (both ways): at that instant, before the clock moves, shop-2 may try the
// lease no more often than for its lone visitor (alone). It catches a
// flight looked up in one critical section and made and stored in the
// next (c10-join-lookup-insert): both visitors find none, and the
// instance runs two flights, each polling on its own.
func pairAttempts(h *harness.H, newShop NewShop, alone int) check.Verdict {
	for _, reverse := range []bool{false, true} {
		_, pair, v := visitorsCommands(h, newShop, 2, point.Lockstep(reverse))
		if !v.Pass {
			return v
		}
		if pair > alone {
			return check.Failed(fmt.Sprintf("%d lease attempts for 2 visitors at one instant, %d for one", pair, alone),
				fmt.Sprintf("while shop-1 held the lease, two visitors of shop-2 missed the book at one instant, taking turns "+
					"one statement each, and shop-2 tried the lease %s at that instant, where a lone visitor's "+
					"miss tried it %s: each visitor started a wait of its own. Both looked for the book's flight before "+
					"either made one: look it up and make it in one critical section", times(pair), times(alone)))
		}
	}
	return check.Passed("")
}

// times says "once", "twice" or "3 times".
func times(n int) string {
	switch n {
	case 1:
		return "once"
	case 2:
		return "twice"
	}
	return fmt.Sprintf("%d times", n)
}

// holdFiller has shop-1's visitor miss and read the row, held at the reads'
// gate, from the calls' n-th on; it keeps the lease in Redis as it is.
func (s *scene) holdFiller(n int) (*harness.Crowd[int], check.Verdict) {
	filler := s.Read(0)
	if err := s.Settle(); err != nil {
		return nil, stuckVerdict(err)
	}
	if s.reads.Calls() < n {
		return nil, s.neverRead()
	}
	if err := s.KeepAlive(); err != nil { // the filler is slow, not dead
		return nil, fleet.Unreachable(err)
	}
	return filler, check.Passed("")
}

// crowdCommands is OneWait's second scene; alone is the lone visitor's
// count of commands.
func crowdCommands(h *harness.H, newShop NewShop, alone int) (string, check.Verdict) {
	// The first read, shop-1's fill of the book, is held; the others, such
	// as another book's, go through at once.
	s, err := newScene(h, newShop, 3, fleet.HoldCalls(1), fleet.HoldCalls())
	if err != nil {
		return "", fleet.Unreachable(err)
	}
	defer s.Close()
	other := otherBook()
	filler, v := s.holdFiller(1)
	if !v.Pass {
		return "", v
	}
	since2, since3 := len(s.taps[1].Log()), len(s.taps[2].Log())
	start := s.Clock.Now()
	// shop-2's first visitor and shop-3's only one miss at one instant.
	first, leave := s.ReadLeaving(1)
	lone := s.Read(2)
	if err := s.Settle(); err != nil {
		return "", stuckVerdict(err)
	}
	rest := s.Reads(1, crowd-1)
	if err := s.Settle(); err != nil {
		return "", stuckVerdict(err)
	}
	// Another book's miss: nobody holds its lease, and its read of the
	// row answers at once, so it is served with no time passing.
	another := s.ReadBook(1, other)
	if err := s.Settle(); err != nil {
		return "", stuckVerdict(err)
	}
	if !another.Done() {
		return "", check.Failed("", fmt.Sprintf("shop-2's visitor of %s, whose row the database would have answered at "+
			"once, was still waiting while shop-2's visitors of %s waited for its fill: %s. Share a wait among the "+
			"visitors of one book, not of the whole instance: key it by the book", other, book, strings.Join(s.Places(), "; ")))
	}
	if o := another.Outcomes()[0]; o.Err != nil || o.Panic != "" {
		return "", check.Failed("", fmt.Sprintf("shop-2's visitor of %s, with nobody filling it and the database well, failed: %v%s", other, o.Err, o.Panic))
	}
	if err := s.Elapse(100 * time.Millisecond); err != nil {
		return "", stuckVerdict(err)
	}
	leave()
	if err := s.Elapse(holdFill - 100*time.Millisecond); err != nil {
		return "", stuckVerdict(err)
	}
	n := bookCommands(s.taps[1], since2)
	together, polls := inStep(s.taps[1].Log()[since2:], s.taps[2].Log()[since3:], start)
	s.reads.OpenAll()
	if err := s.Drive(func() bool { return filler.Done() && rest.Done() && lone.Done() && first.Done() }, patience); err != nil {
		return "", waitVerdict(err, "the visitors were")
	}
	figure := fmt.Sprintf("shop-2's commands naming the book while shop-1 read the row: %d for 1 visitor, %d for %d", alone, n, crowd)
	if bound := 3*alone + 3*crowd; n > bound {
		return "", check.Failed(figure, fmt.Sprintf("%d visitors on shop-2 waited for shop-1's fill and shop-2 sent Redis %d "+
			"commands naming the book (more than %d), where one visitor alone needed %d: each visitor polled on its own. "+
			"On a fleet of 100 instances with 100 visitors each, that is tens of thousands of commands on one key, all "+
			"on the one Redis shard that holds it. Let an instance's visitors of a book share one wait (a flight, as in "+
			"cases 1 to 6): one of them polls, the others wait for its answer", crowd, n, bound, alone))
	}
	for _, o := range rest.Outcomes() {
		if o.Panic != "" || o.Err != nil || o.Value != oldPrice {
			why := ""
			if errors.Is(o.Err, context.Canceled) {
				why = ": the shared wait ran on its first visitor's context, and ended when that visitor left. It works " +
					"for every visitor who joins it, so it must not end with one of them; end it when the last leaves"
			}
			return "", check.Failed(figure, fmt.Sprintf("shop-2's first visitor of %s left after 100 ms; another, who stayed, "+
				"got %s%s", book, outcomeText(o), why))
		}
	}
	if v := gotOne(lone, "shop-3's visitor, who waited for shop-1's fill", oldPrice); !v.Pass {
		return "", check.Failed(figure, v.Message)
	}
	if polls < 4 {
		figure += fmt.Sprintf("; shop-3 polled %d times in %v, too few to tell whether its polls keep in step with shop-2's", polls, holdFill)
	} else {
		figure += fmt.Sprintf("; shop-3's polls at an instant of shop-2's: %d of %d", together, polls)
	}
	if polls >= 4 && together*10 > polls*9 {
		return "", check.Failed(figure, fmt.Sprintf("shop-2's and shop-3's visitors missed at the same instant, and %d of "+
			"shop-3's %d polls of Redis came at the same instant as one of shop-2's: the polls have a fixed period, so "+
			"instances that missed together ask Redis together for as long as they wait. Draw each pause, say from 25 to 75 "+
			"ms (math/rand/v2's N), so that they spread", together, polls))
	}
	return figure + "; the first of shop-2's visitors left and the others got the price; a visitor of another book was served at once", check.Passed("")
}

// lateJoiner is OneWait's third scene: shop-2's first visitor waits for
// shop-1's fill, which never comes, and a second comes 0.9 s later. The
// first gives up after its budget; the second must not give up with it, a
// moment after it came: it waits at least a read's time (the explorer's
// bound on any wait that ends in "try again").
func lateJoiner(h *harness.H, newShop NewShop) (string, check.Verdict) {
	s, err := newScene(h, newShop, 2, fleet.HoldEvery(), fleet.HoldCalls())
	if err != nil {
		return "", fleet.Unreachable(err)
	}
	defer s.Close()
	if _, v := s.holdFiller(1); !v.Pass {
		return "", v
	}
	early := s.Read(1)
	if err := s.Elapse(900 * time.Millisecond); err != nil {
		return "", stuckVerdict(err)
	}
	if early.Done() {
		// Whether it may give up so soon is lease-coalesces's and the
		// explorer's to judge.
		return "a visitor who joined a wait 0.9 s old was not staged (the first visitor had given up)", check.Passed("")
	}
	late := s.Read(1)
	if err := s.Elapse(rebuild - time.Millisecond); err != nil {
		return "", stuckVerdict(err)
	}
	if late.Done() {
		return "", check.Failed("", fmt.Sprintf("shop-2's first visitor waited for shop-1's fill; a second came 0.9 s later, "+
			"and got %s less than %v after it came, when the first one's wait ran out of budget. Each visitor waits its "+
			"own budget: one who joined a wait that began before it came waits on, in a wait of its own",
			outcomeText(late.Outcomes()[0]), rebuild))
	}
	return "a visitor who joined a wait 0.9 s old waited on", check.Passed("")
}

// fillerLeaves is a scene of OneWait: shop-1's first visitor takes the
// lease and reads the row, three more of shop-1's visitors join it, and
// the first leaves. The others still wait for that read: it must not be
// given up and done again, and they must get the price.
func fillerLeaves(h *harness.H, newShop NewShop) check.Verdict {
	s, err := newScene(h, newShop, 1, fleet.HoldEvery(), fleet.HoldCalls())
	if err != nil {
		return fleet.Unreachable(err)
	}
	defer s.Close()
	first, leave := s.ReadLeaving(0)
	if err := s.Settle(); err != nil {
		return stuckVerdict(err)
	}
	if s.reads.Calls() < 1 {
		return s.neverRead()
	}
	others := s.Reads(0, 3)
	if err := s.Settle(); err != nil {
		return stuckVerdict(err)
	}
	leave()
	if err := s.Settle(); err != nil {
		return stuckVerdict(err)
	}
	again := s.reads.Calls()
	s.reads.OpenAll()
	if err := s.Drive(func() bool { return others.Done() && first.Done() }, patience); err != nil {
		return waitVerdict(err, "shop-1's visitors were")
	}
	if again > 1 {
		return check.Failed(fmt.Sprintf("%d reads of the row", again), fmt.Sprintf("shop-1's first visitor took the lease and "+
			"read the row, three more of shop-1's visitors waited with it, and the first left: its read was given up and the "+
			"row read again (%d reads started). The wait was the four visitors', and three still waited: let its read go on "+
			"while any of its visitors waits, not on the context of the one who started it", again))
	}
	if v := gotOne(others, "a visitor who stayed when the first one left", oldPrice); !v.Pass {
		return check.Failed("", v.Message)
	}
	return check.Passed("")
}

// rejoinAfterLeave is OneWait's last scene: shop-1's lone visitor leaves
// while its fill reads the row, and the command shop-1 sends next (its
// lease let go) is held; a visitor who comes meanwhile must get the price,
// not the abandoned wait's error. When it started a wait of its own, a
// third visitor who comes once the abandoned wait has ended must join it
// (joinsTheLiveWait).
func rejoinAfterLeave(h *harness.H, newShop NewShop) (string, check.Verdict) {
	s, err := newScene(h, newShop, 1, fleet.HoldCalls(1), fleet.HoldCalls())
	if err != nil {
		return "", fleet.Unreachable(err)
	}
	defer s.Close()
	first, leave := s.ReadLeaving(0)
	if err := s.Settle(); err != nil {
		return "", stuckVerdict(err)
	}
	if s.reads.Calls() < 1 {
		return "", s.neverRead()
	}
	hold := s.taps[0].Hold(func(fleet.Command) bool { return true })
	defer hold.Release()
	leave()
	if err := s.Settle(); err != nil {
		return "", stuckVerdict(err)
	}
	if !hold.Reached() {
		// Nothing after the visitor left: whether its lease is let go is
		// let-go's to judge.
		return "a visitor who came as the last one left was not staged (shop-1 sent nothing after its visitor left)", check.Passed("")
	}
	late := s.Read(0)
	if err := s.Settle(); err != nil {
		return "", stuckVerdict(err)
	}
	hold.Release()
	// One who joined the abandoned wait has its end as soon as the held
	// command returns, with no time passing; one in a wait of its own
	// goes on waiting for the lease.
	if err := s.Settle(); err != nil {
		return "", stuckVerdict(err)
	}
	if late.Done() {
		if o := late.Outcomes()[0]; o.Panic != "" || o.Err != nil {
			return "", check.Failed("", fmt.Sprintf("shop-1's only visitor left while its fill read the row; a visitor who came "+
				"while shop-1 was still letting go (%s held) got %s the moment that command returned: it joined the wait its "+
				"last visitor had left, and got that wait's end. Once the last visitor has left, take the wait off the "+
				"instance at once, so that the next visitor starts one of its own", fleet.Shorten(hold.Held()), outcomeText(o)))
		}
	}
	third := late // one more visitor when the late one waits on its own
	if !late.Done() {
		var v check.Verdict
		if third, v = joinsTheLiveWait(s, hold.Held()); !v.Pass {
			return "", v
		}
	}
	if err := s.Drive(func() bool { return late.Done() && first.Done() && third.Done() }, patience); err != nil {
		return "", waitVerdict(err, "shop-1's visitors were")
	}
	if o := late.Outcomes()[0]; o.Panic != "" || o.Err != nil || o.Value != oldPrice {
		// It waited, in a wait of its own, for a lease nobody let go:
		// let-go's to judge.
		return "a visitor who came as the last one left started a wait of its own (and got " + outcomeText(o) + ")", check.Passed("")
	}
	return "a visitor who came as the last one left got the price", check.Passed("")
}

// joinsTheLiveWait is the end of rejoinAfterLeave's scene when its late
// visitor started a wait of its own: the abandoned wait has ended (its
// held command let go), and a third visitor who comes now, with no time
// passing, must join the late visitor's wait and try the lease no time at
// that instant. An abandoned wait that, ending, takes whatever wait is on
// the instance off it (a delete with no look at whose it is:
// c10-land-no-guard) has the third start a second one, each polling and
// trying the lease on its own.
func joinsTheLiveWait(s *scene, letGo string) (*harness.Crowd[int], check.Verdict) {
	since := len(s.taps[0].Log())
	third := s.Read(0)
	if err := s.Settle(); err != nil {
		return third, stuckVerdict(err)
	}
	if n := leaseAttempts(s.taps[0], since); n > 0 {
		return third, check.Failed(fmt.Sprintf("%d lease attempts by a visitor with a wait to join", n), fmt.Sprintf("shop-1's "+
			"only visitor left while its fill read the row; a visitor who came while shop-1 was still letting go (%s "+
			"held) started a wait of its own, as it should. Once the abandoned wait had ended, a third visitor came, and "+
			"shop-1 tried the lease %s at that instant, where the third should have joined the second's wait: the "+
			"abandoned wait, ending, took the book's wait off the instance though it was no longer its own, and the "+
			"instance now runs two, each polling and trying the lease. Take a wait off the instance only if it is "+
			"still the one on it (compare before you delete)", fleet.Shorten(letGo), times(n)))
	}
	return third, check.Passed("")
}

// ReadBook starts one visitor of instance i asking for another book's
// price.
func (s *scene) ReadBook(i int, b string) *harness.Crowd[int] {
	shop := s.shops[i]
	return s.visit(1, func(ctx context.Context) (int, error) { return shop.Price(ctx, b) })
}

// otherBook is a priced book that is not the scenes' book.
func otherBook() string {
	for _, b := range catalog.Priced() {
		if b != book {
			return b
		}
	}
	panic("case10: the catalogue has one priced book")
}

// leaseAttempts counts the commands of t's log from since on that may
// take a lock on a key naming the book (fleet.Command.Attempt).
func leaseAttempts(t *fleet.Tap, since int) int {
	n := 0
	for _, c := range t.Log()[since:] {
		var keys []string
		for _, k := range c.Keys {
			if strings.Contains(k, book) {
				keys = append(keys, k)
			}
		}
		if len(keys) > 0 && c.Attempt(keys) {
			n++
		}
	}
	return n
}

// bookCommands counts the commands in t's log from since on that name a
// key of the scenes' book.
func bookCommands(t *fleet.Tap, since int) int {
	n := 0
	for _, c := range t.Log()[since:] {
		for _, k := range c.Keys {
			if strings.Contains(k, book) {
				n++
				break
			}
		}
	}
	return n
}

// inStep counts the instants after start at which b sent commands, and
// how many of them are also instants at which a sent one.
func inStep(a, b []fleet.Command, start time.Time) (together, polls int) {
	at := map[int64]bool{}
	for _, c := range a {
		at[c.At.UnixNano()] = true
	}
	seen := map[int64]bool{}
	for _, c := range b {
		t := c.At.UnixNano()
		if !c.At.After(start) || seen[t] {
			continue
		}
		seen[t] = true
		polls++
		if at[t] {
			together++
		}
	}
	return together, polls
}

// outcomeText says what a visitor got.
func outcomeText(o harness.Outcome[int]) string {
	switch {
	case o.Panic != "":
		return "a panic: " + o.Panic
	case o.Err != nil:
		return fmt.Sprintf("an error: %v", o.Err)
	default:
		return cents(o.Value)
	}
}
