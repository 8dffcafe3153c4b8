package case11

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
	"stampede/checker/point"
	"stampede/shop/catalog"
)

// maxSteps is how many of a write's commands after its commit WriteSteps
// stops it before, one scene each.
const maxSteps = 6

// burst is how many visitors of one instance miss at once in OneRead and
// hit at once in LocalHits.
const burst = 20

// Invalidate checks that once a write has returned and its message has
// reached the fleet, no instance serves the old price. Three instances
// each hold a copy of the old price; shop-1 writes; then a visitor of each
// asks. The book is oddBook, whose name holds a colon, spaces and other
// separators. It catches copies with a time to live and nothing else (the
// shipped code), a write that publishes nothing or on another channel, a
// message the instances cannot read (c11-colon-title: "book:version" cut
// at the first colon), and an instance that drops only the copy of the
// writer.
func Invalidate(h *harness.H, newShop NewShop) check.Verdict {
	s, err := newSceneOf(h, newShop, 3, setting{reads: fleet.HoldCalls(), commits: fleet.HoldCalls(), book: oddBook})
	if err != nil {
		return fleet.Unreachable(err)
	}
	defer s.Close()
	if v := s.Warm(0, 1, 2); !v.Pass {
		return v
	}
	since := len(s.taps[0].Log())
	if v := s.WriteDone(0, newPrice); !v.Pass {
		return v
	}
	if v := s.onTheChannel(since); !v.Pass {
		return v
	}
	return s.Served("three instances with a copy, a write on one", all(3), func(stale []string) string {
		msg := fmt.Sprintf("after shop-1's write of %s had returned, %s still served the old price from memory. ",
			cents(newPrice), strings.Join(stale, ", "))
		switch {
		case s.Subscribed() == 0:
			msg += "No instance was subscribed to the channel New is given: Listen must subscribe, and drop the copies each message makes old. "
		case s.Published(0, since) == "nothing":
			msg += "The write published nothing on the channel New is given: after its commit and its tombstone, announce the book and its new version. "
		default:
			msg += fmt.Sprintf("The write published %s, and %d instances were subscribed; an instance must drop its copy of the book on that message. "+
				"The book was %q: a book's name is any string, so a message must carry it whole, whatever separators it holds (cut where "+
				"the name cannot be: before it, or after the last separator). ", s.Published(0, since), s.Subscribed(), s.book)
		}
		return msg + "A copy that only expires serves the old price for the rest of its time to live, each instance for a time of its own."
	})
}

// onTheChannel fails unless every instance that subscribed did so on the
// channel New was given, and shop-1's write (its commands from since)
// published on it and on no other: a fleet's channel is its deployment's,
// and a name of the code's own mixes fleets that share a Redis, or hears
// nothing.
func (s *scene) onTheChannel(since int) check.Verdict {
	for i, t := range s.taps {
		for _, c := range t.Channels() {
			if c != s.channel {
				return check.Failed("", fmt.Sprintf("shop-%d subscribed to %q; the channel New was given is %q. Publish and "+
					"subscribe on the channel New is given and on no other: fleets that share a Redis are given channels "+
					"of their own.", i+1, c, s.channel))
			}
		}
	}
	for _, c := range s.sent(0, since) {
		if c.Name == "publish" && len(c.Args) > 0 && c.Args[0] != s.channel {
			return check.Failed("", fmt.Sprintf("shop-1's write published on %q; the channel New was given is %q. Publish "+
				"on the channel New is given and on no other.", c.Args[0], s.channel))
		}
	}
	return check.Passed("")
}

// WriteSteps checks that a visitor who comes in the middle of a write
// leaves no old copy behind it. The write is stopped before its commit,
// and then before each of its Redis commands after the commit in turn
// (one scene each); meanwhile a visitor of an instance with no copy asks
// (Redis still holds the old price); then the write finishes. It catches
// a message (or a drop of the copies) sent before the commit, or before
// the tombstone, when a copy filled after it is stored regardless.
func WriteSteps(h *harness.H, newShop NewShop) check.Verdict {
	for k := 0; k <= maxSteps; k++ {
		v, more := writeStep(h, newShop, k)
		if !v.Pass || !more {
			return v
		}
	}
	return check.Passed(fmt.Sprintf("a visitor before the commit and before each of the write's first %d commands after it", maxSteps))
}

// writeStep is one scene of WriteSteps: k is 0 for a visitor before the
// commit, else the write's command after the commit the visitor comes
// before. It reports false once the write sends fewer than k commands.
func writeStep(h *harness.H, newShop NewShop, k int) (check.Verdict, bool) {
	s, err := newScene(h, newShop, 3, fleet.HoldCalls(), fleet.HoldCalls(1))
	if err != nil {
		return fleet.Unreachable(err), false
	}
	defer s.Close()
	if v := s.Warm(2); !v.Pass { // Redis holds the old price; shop-2 has no copy
		return v, false
	}
	m := s.Mark()
	since := len(s.taps[0].Log())
	w := s.Write(0, newPrice)
	if err := s.Drive(func() bool { return s.commits.Calls() > 0 || w.Done() }, patience); err != nil {
		return waitVerdict(err, "shop-1's write, before its commit, was"), false
	}
	where := "before its commit"
	var stop *fleet.Hold
	if k > 0 {
		stop = s.taps[0].Hold(nthSent(k))
		defer stop.Release()
		s.commits.Gate(1).Open()
		if err := s.Drive(func() bool { return stop.Reached() || w.Done() }, patience); err != nil {
			return waitVerdict(err, "shop-1's write was"), false
		}
		if !stop.Reached() {
			return check.Passed(fmt.Sprintf("a visitor before the commit and before each of the write's %s after it", fleet.Count(k-1, "command"))), false
		}
		where = fmt.Sprintf("before its command %d after the commit (%s)", k, fleet.Shorten(stop.Held()))
	}
	r := s.Read(1)
	if err := s.Drive(r.Done, patience); err != nil {
		return waitVerdict(err, "shop-2's visitor, during the write, was"), false
	}
	if v := gotOne(r, "shop-2's visitor, during the write", oldPrice, newPrice); !v.Pass {
		return v, false
	}
	s.commits.Gate(1).Open()
	if stop != nil {
		stop.Release()
	}
	if err := s.Drive(w.Done, patience); err != nil {
		return waitVerdict(err, "shop-1's write was"), false
	}
	if v := wrote(w, "shop-1's write"); !v.Pass {
		return v, false
	}
	if v := s.Delivered(m); !v.Pass {
		return v, false
	}
	v := s.Served("a visitor in the middle of a write: "+where, []int{1}, func([]string) string {
		msg := fmt.Sprintf("shop-1's write was stopped %s, and shop-2's visitor came meanwhile, found no copy, and "+
			"read %s from Redis. Then the write finished (it sent %s)", where, cents(oldPrice), s.sentAfter(0, since))
		if s.Published(0, since) == "nothing" {
			return msg + fmt.Sprintf(", publishing nothing; a visitor of shop-2 after that still got %s, from its copy. "+
				"Publish each write after its commit and its tombstone, with the row's new version.", cents(oldPrice))
		}
		return msg + fmt.Sprintf(" and its message reached shop-2; yet a visitor of shop-2 after that still got %s, from its "+
			"copy. A message sent before the write's commit, or before its tombstone in Redis, comes too early: a copy "+
			"filled after it from the old row, or from Redis's old price, is not dropped by it. Publish after both, with "+
			"the row's new version, and let no copy below an announced version be stored.", cents(oldPrice))
	})
	return v, v.Pass
}

// Crossing checks that a fill that read the old price before a write's
// message does not store it after. Shop-2's visitor misses its copy; its
// fetch is held once Redis has answered its first command (Redis holds
// the old price), or, in the second scene, once the database has read the
// row (Redis empty); meanwhile shop-1 writes, and its message reaches
// shop-2; then the fetch goes on. A visitor of shop-2 after that must get
// the new price. It catches a fill stored whatever came meanwhile: a copy
// with no version or generation, or one compared only with the copy the
// message dropped; and, in the scenes of crossingInStep, a message handled
// in two steps with a fill landing between.
func Crossing(h *harness.H, newShop NewShop) check.Verdict {
	var played []string
	for _, fromRedis := range []bool{true, false} {
		v, ok := crossing(h, newShop, fromRedis)
		if !v.Pass {
			return v
		}
		if ok {
			played = append(played, v.Figure)
		}
	}
	if len(played) == 0 {
		return check.Skipped("shop-2's fetch was never held: it sent Redis no command that names a key, and never read the row")
	}
	if v, ok := crossedTwice(h, newShop); !v.Pass {
		return v
	} else if ok {
		played = append(played, v.Figure)
	}
	landed, v := inStep(leads, func(reverse bool, lead int) (check.Verdict, bool) {
		return crossingInStep(h, newShop, reverse, lead)
	})
	if !v.Pass {
		return v
	}
	if landed > 0 {
		played = append(played, fmt.Sprintf("a fetch landing as the message is handled, in lockstep: %d plays", landed))
	}
	return check.Passed(strings.Join(played, "; "))
}

// leads are the head starts crossingInStep plays (point.LockstepAfter):
// the steps that matter lie deeper in one goroutine's code than in the
// other's, by a few statements that differ from answer to answer.
var leads = []int{0, 1, 2, 3, 4, 5, 6, 7, 8}

// crossingInStep is Crossing's scene of a fetch that lands as the write's
// message is handled: shop-2's fetch is held once Redis has answered it
// (the old price); shop-1 writes, and its message reaches shop-2's
// subscription and is held there (Tap.HoldMessages); then both go on at
// once, taking turns one statement each, the first lead steps ahead. A
// visitor of shop-2 after that must get the new price. It catches a
// message handled in two critical sections, the copy dropped in one and
// the floor raised in the next, with a fill landing between
// (c11-drop-then-floor). ok is false when the fetch or the message was
// never held.
func crossingInStep(h *harness.H, newShop NewShop, reverse bool, lead int) (v check.Verdict, ok bool) {
	s, err := newScene(h, newShop, 2, fleet.HoldCalls(), fleet.HoldCalls())
	if err != nil {
		return fleet.Unreachable(err), false
	}
	defer s.Close()
	answer, r, held, v := s.fetchOnceAnswered(0)
	if !v.Pass || !held {
		return v, false
	}
	msg := s.taps[1].HoldMessages()
	if v := s.WriteDone(0, newPrice); !v.Pass {
		return v, false
	}
	if !msg.Reached() {
		s.taps[1].Disarm()
		return check.Passed(""), false
	}
	v = h.Under(point.LockstepAfter(reverse, lead), func() check.Verdict {
		msg.Release()
		answer.Release()
		if err := s.Drive(r.Done, patience); err != nil {
			return waitVerdict(err, "shop-2's visitor, its fetch landing as the write's message was handled, was")
		}
		return check.Passed("")
	})
	if !v.Pass {
		return v, true
	}
	if v := gotOne(r, "shop-2's visitor whose fetch landed as the write's message was handled", oldPrice, newPrice); !v.Pass {
		return v, true
	}
	return s.Served("a fetch landing as the message was handled", []int{1}, func([]string) string {
		return fmt.Sprintf("shop-2's visitor missed its copy, and its fetch read the old price from Redis. Meanwhile "+
			"shop-1's write of %s committed and returned, and its message reached shop-2. Then shop-2 handled the "+
			"message while the fetch landed, taking turns one statement each, and a visitor after it got the old "+
			"price: one saw the other half done. Handle a message in one critical section (raise the floor and "+
			"drop the older copy together), and land a fill in one too (compare with the floor and store the "+
			"copy together), so that each sees all of the other or none of it", cents(newPrice))
	}), true
}

// crossing is one scene of Crossing; ok is false when the fetch was never
// held there.
func crossing(h *harness.H, newShop NewShop, fromRedis bool) (v check.Verdict, ok bool) {
	reads := fleet.HoldCalls()
	if !fromRedis {
		reads = fleet.HoldCalls(1)
	}
	s, err := newScene(h, newShop, 3, reads, fleet.HoldCalls())
	if err != nil {
		return fleet.Unreachable(err), false
	}
	defer s.Close()
	where := "the database read the row"
	var answer *fleet.Hold
	if fromRedis {
		where = "Redis answered (it held the old price)"
		if v := s.Warm(2); !v.Pass {
			return v, false
		}
		answer = s.holdAnswer(1)
	}
	r := s.Read(1)
	held := func() bool {
		if fromRedis {
			return answer.Reached()
		}
		return reads.Calls() > 0
	}
	if err := s.Drive(func() bool { return held() || r.Done() }, patience); err != nil {
		return waitVerdict(err, "shop-2's visitor was"), false
	}
	if !held() {
		return check.Passed(""), false
	}
	if v := s.WriteDone(0, newPrice); !v.Pass {
		return v, false
	}
	if answer != nil {
		answer.Release()
	}
	reads.OpenAll()
	if err := s.Drive(r.Done, patience); err != nil {
		return waitVerdict(err, "shop-2's visitor was"), false
	}
	if v := gotOne(r, "shop-2's visitor whose fetch the write crossed", oldPrice, newPrice); !v.Pass {
		return v, false
	}
	figure := "a fetch held after " + where + ", a write meanwhile"
	return s.Served(figure, []int{1}, func([]string) string {
		return fmt.Sprintf("shop-2's visitor missed its copy; its fetch was held once %s. Meanwhile shop-1's write "+
			"of %s committed, returned, and its message reached shop-2, which had nothing to drop yet. Then the "+
			"fetch went on and stored %s in shop-2's memory, and a visitor after it got the old price. A fill "+
			"must not store what it read before a message about its book: keep the newest version each message "+
			"announced, and store a copy only if it is not older (or count the messages, and store only if none "+
			"came while the fill ran).", where, cents(newPrice), cents(oldPrice))
	}), true
}

// crossedTwice is Crossing's scene of a second fill: shop-2's fetch is
// held once Redis has answered it with the old price; shop-1 writes, and
// its message reaches shop-2; then a second visitor of shop-2 asks, and is
// given the time of a read of the row to be served; then the first fetch
// lands. The second visitor came after the message: it must get the new
// price, and so must a visitor after the first fetch landed. It catches a
// message that leaves the fetch under way on the table, so that a visitor
// after it shares what that fetch read before it
// (c11-invalidate-keeps-flight), and a floor forgotten once a copy is
// stored at it, so that the older fetch landing after the newer one stores
// the old price over the new (c11-floor-pruned). ok is false when the
// fetch was never held.
func crossedTwice(h *harness.H, newShop NewShop) (v check.Verdict, ok bool) {
	s, err := newScene(h, newShop, 3, fleet.HoldCalls(), fleet.HoldCalls())
	if err != nil {
		return fleet.Unreachable(err), false
	}
	defer s.Close()
	answer, first, held, v := s.fetchOnceAnswered(2)
	if !v.Pass || !held {
		return v, false
	}
	if v := s.WriteDone(0, newPrice); !v.Pass {
		return v, false
	}
	// The second visitor: the time of one read of the row (Redis holds
	// the write's tombstone) to be served, or to wait for the held fetch.
	second := s.Read(1)
	err = s.Drive(second.Done, catalog.QueryCost+50*time.Millisecond)
	var st *harness.Stuck
	if err != nil && !errors.Is(err, fleet.ErrNoBound) && !(errors.As(err, &st) && st.Cause == harness.Deadlocked) {
		return stuckVerdict(err), true
	}
	answer.Release()
	if err := s.Drive(func() bool { return first.Done() && second.Done() }, patience); err != nil {
		return waitVerdict(err, "shop-2's visitors were"), true
	}
	if v := gotOne(first, "shop-2's visitor whose fetch the write crossed", oldPrice, newPrice); !v.Pass {
		return v, true
	}
	who := "shop-2's visitor who came once the write had returned and its message had arrived"
	if o := second.Outcomes()[0]; o.Panic == "" && o.Err == nil && o.Value == oldPrice {
		return check.Failed("a visitor after the message served the old price", fmt.Sprintf("shop-2's visitor missed "+
			"its copy, and its fetch was held once Redis had answered it with the old price. Meanwhile shop-1's write "+
			"of %s committed, returned, and its message reached shop-2. Then %s got %s: it shared the fetch that had "+
			"read the old price before the message. A message makes every fetch of its book under way old for the "+
			"visitors after it: take it off the table (those already waiting get what it read; it is not stored), so "+
			"that the next visitor starts a fetch of its own", cents(newPrice), who, cents(oldPrice))), true
	}
	if v := gotOne(second, who, newPrice); !v.Pass {
		return v, true
	}
	return s.Served("a second visitor after the write, then the first fetch landing", []int{1}, func([]string) string {
		return fmt.Sprintf("shop-2's visitor missed its copy, and its fetch was held once Redis had answered it with "+
			"the old price. Meanwhile shop-1's write of %s committed, returned, and its message reached shop-2; then a "+
			"second visitor of shop-2 fetched and got the new price. Then the first fetch landed, and a visitor after "+
			"it got the old price: the first fetch stored what it read before the message over the newer copy. Keep "+
			"the newest version each message announced for as long as an older fetch may land (do not forget it "+
			"when a copy is stored at it), and store a copy only if it is not older", cents(newPrice))
	}), true
}

// LateMessage checks that a write's message that arrives after a newer
// write's does not bring the older price back. Shop-1 writes and is held
// just before its PUBLISH; shop-2's visitor misses, finds the write's
// tombstone in Redis and reads the row (the new price), held there;
// shop-3 writes a newer price, and its message reaches every instance;
// then shop-1's message goes out, late, and then shop-2's fetch lands.
// Every instance must serve the newest price. It catches a floor set to
// each message's version rather than raised to the highest (the late
// message lowers it, and the fetch is stored), and a message that carries
// a price into the copies with no version to compare.
func LateMessage(h *harness.H, newShop NewShop) check.Verdict {
	v := lateMessage(h, newShop)
	if !v.Pass {
		return v
	}
	w := lateReply(h, newShop)
	if !w.Pass {
		return w
	}
	return check.Passed(v.Figure + "; " + w.Figure)
}

// lateReply is LateMessage's second scene: two writes of the book on two
// instances. Shop-1's write commits and the reply is held (the commit
// stands, and shop-1 does not know it yet); shop-2 writes a newer price,
// and its message reaches both; then shop-1 hears back and finishes its
// write. Both instances must serve the newest price. It catches a write
// that puts its own price in its instance's copy without the floor's say
// (c11-write-through): shop-1 stores the older price after the newer
// write's message, and serves it for the copy's life.
func lateReply(h *harness.H, newShop NewShop) check.Verdict {
	replies := fleet.HoldCalls(1)
	s, err := newSceneOf(h, newShop, 2, setting{reads: fleet.HoldCalls(), commits: fleet.HoldCalls(), replies: replies})
	if err != nil {
		return fleet.Unreachable(err)
	}
	defer s.Close()
	if v := s.Warm(0, 1); !v.Pass {
		return v
	}
	m := s.Mark()
	w := s.Write(0, newPrice)
	if err := s.Drive(func() bool { return replies.Calls() > 0 || w.Done() }, patience); err != nil {
		return waitVerdict(err, "shop-1's write was")
	}
	if replies.Calls() == 0 {
		if v := wrote(w, "shop-1's write"); !v.Pass {
			return v
		}
		return check.Skipped("shop-1's write never committed")
	}
	if v := s.WriteDone(1, newest); !v.Pass {
		return v
	}
	replies.OpenAll()
	if err := s.Drive(w.Done, patience); err != nil {
		return waitVerdict(err, "shop-1's write was")
	}
	if v := wrote(w, "shop-1's write"); !v.Pass {
		return v
	}
	if v := s.Delivered(m); !v.Pass {
		return v
	}
	return s.Served("two writes, the first one's reply held after its commit", all(2), func(stale []string) string {
		return fmt.Sprintf("shop-1 wrote %s, and the database's reply was held once the write had committed; meanwhile "+
			"shop-2 wrote %s, and its message reached both instances. Then shop-1 heard back from its commit and "+
			"finished its write, and after that %s served an older price than %s. A write must not put its own price "+
			"in its instance's copy on its own say: a newer write's message may have come while its commit's reply was "+
			"on its way. Leave the copy to the next fill, or store the write's price only if its version is not below "+
			"the highest a message announced.", cents(newPrice), cents(newest), strings.Join(stale, ", "), cents(newest))
	})
}

// lateMessage is LateMessage's first scene.
func lateMessage(h *harness.H, newShop NewShop) check.Verdict {
	// The warm-up reads the row once (shop-3); the second read, shop-2's,
	// waits at its gate.
	s, err := newScene(h, newShop, 3, fleet.HoldCalls(2), fleet.HoldCalls())
	if err != nil {
		return fleet.Unreachable(err)
	}
	defer s.Close()
	if v := s.Warm(2); !v.Pass {
		return v
	}
	m := s.Mark()
	stop := s.taps[0].Hold(func(c fleet.Command) bool { return c.Name == "publish" })
	defer stop.Release()
	w := s.Write(0, newPrice)
	if err := s.Drive(func() bool { return stop.Reached() || w.Done() }, patience); err != nil {
		return waitVerdict(err, "shop-1's write was")
	}
	if !stop.Reached() {
		return check.Skipped("shop-1's write published nothing to hold (see invalidate)")
	}
	r := s.Read(1)
	if err := s.Drive(func() bool { return s.reads.Calls() >= 2 || r.Done() }, patience); err != nil {
		return waitVerdict(err, "shop-2's visitor was")
	}
	if v := s.WriteDone(2, newest); !v.Pass {
		return v
	}
	stop.Release()
	if err := s.Drive(w.Done, patience); err != nil {
		return waitVerdict(err, "shop-1's write was")
	}
	if v := wrote(w, "shop-1's write"); !v.Pass {
		return v
	}
	if v := s.Delivered(m); !v.Pass {
		return v
	}
	s.reads.OpenAll()
	if err := s.Drive(r.Done, patience); err != nil {
		return waitVerdict(err, "shop-2's visitor was")
	}
	if v := gotOne(r, "shop-2's visitor, during the writes", oldPrice, newPrice, newest); !v.Pass {
		return v
	}
	return s.Served("a write's message late, after a newer write's", all(3), func(stale []string) string {
		return fmt.Sprintf("shop-1 wrote %s and its message was held; meanwhile shop-2's visitor read the row (%s), and shop-3 "+
			"wrote %s, whose message reached every instance. Then shop-1's message arrived, late, and shop-2's fetch "+
			"landed. After that %s served an older price than %s. Messages can arrive out of order: a message must never "+
			"lower what an instance knows (keep the highest version announced, not the last), and must not carry a "+
			"price into the copies with nothing to say it is not older.",
			cents(newPrice), cents(newPrice), cents(newest), strings.Join(stale, ", "), cents(newest))
	})
}

// Reconnect checks that an instance whose subscription was cut forgets
// what it holds when it subscribes again. Shop-2 holds a copy; its
// subscription is cut, and every connection it opens is held; shop-1
// writes, and its message reaches nobody there; then shop-2 connects
// again. In the second scene shop-2's fetch is also under way across the
// cut (held once Redis answered it). A visitor of shop-2 after that must
// get the new price. It catches a Listen that reads only messages (go-redis
// subscribes again by itself, and says so only with a *Subscription on
// ChannelWithSubscriptions), and a forget that lets a fetch begun before
// it store what it read, or a visitor after it join that fetch. A third
// scene starts the subscription late (lateStart), and a fourth has a
// message and then a cut cross one fetch (messageThenCut).
func Reconnect(h *harness.H, newShop NewShop) check.Verdict {
	var played []string
	for _, inFlight := range []bool{false, true} {
		v, ok := reconnect(h, newShop, inFlight)
		if !v.Pass {
			return v
		}
		if ok {
			played = append(played, v.Figure)
		}
	}
	if len(played) == 0 {
		return check.Skipped("shop-2 had no subscription to cut: Listen never subscribed (see invalidate)")
	}
	v := lateStart(h, newShop)
	if !v.Pass {
		return v
	}
	played = append(played, v.Figure)
	v, ok := messageThenCut(h, newShop)
	if !v.Pass {
		return v
	}
	if ok {
		played = append(played, v.Figure)
	}
	return check.Passed(strings.Join(played, "; "))
}

// messageThenCut is Reconnect's scene of a fetch that a message and then a
// cut both cross: shop-2's visitor misses, and its fetch's first command is
// held on its way to Redis; shop-1 writes, and its message reaches shop-2
// (which may take the fetch off its table); the fetch goes on, reads the
// write's price from the row, and is held there. Then shop-2's
// subscription is cut, shop-1 writes again (the message is lost), shop-2
// subscribes again, and the fetch lands. A visitor of shop-2 after that
// must get the newest price. It catches a new subscription that refuses
// only the fetches still on the table, marking them, when a message has
// already taken one off (c11-stale-flag-per-flight). ok is false when the
// fetch or the subscription was never there to hold or cut.
func messageThenCut(h *harness.H, newShop NewShop) (v check.Verdict, ok bool) {
	reads := fleet.HoldCalls(1)
	s, err := newScene(h, newShop, 2, reads, fleet.HoldCalls())
	if err != nil {
		return fleet.Unreachable(err), false
	}
	defer s.Close()
	first := s.taps[1].Hold(func(c fleet.Command) bool { return len(c.Keys) > 0 })
	r := s.Read(1)
	if err := s.Drive(func() bool { return first.Reached() || r.Done() }, patience); err != nil {
		return waitVerdict(err, "shop-2's visitor was"), false
	}
	if !first.Reached() {
		return check.Passed(""), false
	}
	if v := s.WriteDone(0, newPrice); !v.Pass {
		return v, false
	}
	first.Release()
	if err := s.Drive(func() bool { return reads.Calls() > 0 || r.Done() }, patience); err != nil {
		return waitVerdict(err, "shop-2's visitor was"), false
	}
	if reads.Calls() == 0 {
		return check.Passed(""), false // it took its price from Redis: crossing's scenes judge that
	}
	if cut, v := s.writeWhileCut(1, newest); !cut || !v.Pass {
		return v, false
	}
	reads.OpenAll()
	if err := s.Drive(r.Done, patience); err != nil {
		return waitVerdict(err, "shop-2's visitor was"), false
	}
	if v := gotOne(r, "shop-2's visitor whose fetch a message and a cut crossed", oldPrice, newPrice, newest); !v.Pass {
		return v, false
	}
	return s.Served("a fetch crossed by a message and then a cut", []int{1}, func(stale []string) string {
		return fmt.Sprintf("shop-2's visitor missed, and its fetch began; shop-1's write of %s was published and reached "+
			"shop-2, and the fetch then read that price from the row. Then shop-2's subscription was cut, shop-1's "+
			"write of %s was published while shop-2 was away, and shop-2 subscribed again; then the fetch landed, and a "+
			"visitor of shop-2 after that got the older price: %s. A fetch begun before the new subscription cannot "+
			"vouch for what it read, whether or not a message had taken it off the table: count the subscription's "+
			"starts, and store a fill only if none came while it ran", cents(newPrice), cents(newest), strings.Join(stale, ", "))
	}), true
}

// lateStart is Reconnect's third scene: shop-2's subscription comes up
// only after its first visitor has been served, and a write is published
// in between. Once it is up, shop-2 must serve the new price.
func lateStart(h *harness.H, newShop NewShop) check.Verdict {
	s, err := newScene(h, newShop, 1, fleet.HoldCalls(), fleet.HoldCalls())
	if err != nil {
		return fleet.Unreachable(err)
	}
	defer s.Close()
	if v := s.Warm(0); !v.Pass {
		return v
	}
	late, subscribe := s.addLate()
	defer subscribe()
	if err := s.Settle(); err != nil {
		return stuckVerdict(err)
	}
	if v := s.Warm(late); !v.Pass {
		return v
	}
	if v := s.WriteDone(0, newPrice); !v.Pass {
		return v
	}
	m := s.Mark()
	subscribe()
	if v := s.Delivered(m); !v.Pass {
		return v
	}
	return s.Served("a subscription that comes up after the first visitor", []int{late}, func([]string) string {
		return fmt.Sprintf("shop-2's subscription could not start until its first visitor had been served (from Redis, %s); "+
			"shop-1's write of %s was published meanwhile, and never reached shop-2. Once shop-2's subscription was up, a "+
			"visitor of shop-2 still got the old price. Until the subscription is confirmed, the instance hears of no "+
			"write: keep nothing it fetches then, or forget everything when the subscription starts (the first time too).",
			cents(oldPrice), cents(newPrice))
	})
}

// reconnect is one scene of Reconnect; ok is false when shop-2 had no
// subscription, or its fetch was never held.
func reconnect(h *harness.H, newShop NewShop, inFlight bool) (check.Verdict, bool) {
	s, err := newScene(h, newShop, 3, fleet.HoldCalls(), fleet.HoldCalls())
	if err != nil {
		return fleet.Unreachable(err), false
	}
	defer s.Close()
	var r *harness.Crowd[int]
	var answer *fleet.Hold
	what := "shop-2 held a copy of the old price"
	if inFlight {
		what = "shop-2's visitor's fetch had its answer from Redis (the old price) and was held"
		if v := s.Warm(2); !v.Pass {
			return v, false
		}
		answer = s.holdAnswer(1)
		r = s.Read(1)
		if err := s.Drive(func() bool { return answer.Reached() || r.Done() }, patience); err != nil {
			return waitVerdict(err, "shop-2's visitor was"), false
		}
		if !answer.Reached() {
			return check.Passed(""), false
		}
	} else if v := s.Warm(0, 1, 2); !v.Pass {
		return v, false
	}
	if cut, v := s.writeWhileCut(1, newPrice); !cut || !v.Pass {
		return v, false
	}
	if inFlight {
		// A visitor who comes now, after the write returned and with the
		// subscription back, comes after the instance knew it had missed
		// messages: it must not join the fetch begun before.
		late := s.Read(1)
		if err := s.Settle(); err != nil {
			return stuckVerdict(err), false
		}
		answer.Release()
		if err := s.Drive(func() bool { return r.Done() && late.Done() }, patience); err != nil {
			return waitVerdict(err, "shop-2's visitors were"), false
		}
		if v := gotOne(r, "shop-2's visitor whose fetch crossed the cut", oldPrice, newPrice); !v.Pass {
			return v, false
		}
		if o := late.Outcomes()[0]; o.Panic == "" && o.Err == nil && o.Value == oldPrice {
			return check.Failed("a visitor after the cut joined a fetch from before it", fmt.Sprintf("%s when its "+
				"subscription was cut. Shop-1's write of %s was published while shop-2 was not subscribed. Then shop-2 "+
				"subscribed again, and a visitor of shop-2 came before the old fetch had landed: it got the old price, "+
				"%s, the fetch's. A new subscription forgets what it cannot vouch for, the fetches under way too: a "+
				"visitor who comes after it must start a fetch of its own", what, cents(newPrice), cents(oldPrice))), false
		}
		if v := gotOne(late, "shop-2's visitor who came after the subscription was back", newPrice); !v.Pass {
			return v, false
		}
	}
	figure := "a subscription cut during a write"
	if inFlight {
		figure = "a subscription cut during a write and a fetch"
	}
	return s.Served(figure, []int{1}, func([]string) string {
		msg := fmt.Sprintf("%s when its subscription was cut. Shop-1's write of %s was published while shop-2 was "+
			"not subscribed, so its message never reached shop-2 (pub/sub keeps nothing for a subscriber that is "+
			"away). Then shop-2 subscribed again (go-redis does it by itself), and a visitor of shop-2 after that "+
			"got the old price. ", what, cents(newPrice))
		if inFlight {
			return msg + "The subscription's new start must also refuse what a fetch begun before it read: count " +
				"the subscription's starts, and store a fill only if none came while it ran."
		}
		return msg + "An instance cannot know what it missed while it was away: when its subscription starts " +
			"again (a *redis.Subscription on ChannelWithSubscriptions), drop every copy."
	}), true
}

// writeWhileCut cuts instance i's subscription, lets the cut settle, has
// shop-1 write price (its message reaches nobody on i), and lets i
// subscribe again, until the new subscription's confirmation has reached
// it. cut is false, and v a pass, when i had no subscription to cut.
func (s *scene) writeWhileCut(i, price int) (cut bool, v check.Verdict) {
	closed, again := s.taps[i].Cut()
	defer again()
	if closed == 0 {
		return false, check.Passed("")
	}
	if err := s.Settle(); err != nil {
		return true, stuckVerdict(err)
	}
	if v := s.WriteDone(0, price); !v.Pass {
		return true, v
	}
	m := s.Mark()
	again()
	return true, s.Delivered(m) // the new subscription's confirmation
}

// WriterLeaves checks that a write whose visitor leaves at its commit
// still sends its tombstone and its message: three instances hold a copy;
// shop-1's write is committed as its visitor's context is cancelled; then
// a visitor of each instance asks. It catches a tombstone or a PUBLISH
// sent on the writer's own context, which a server cancels the moment its
// client hangs up: the commit stands, and nobody hears of it.
func WriterLeaves(h *harness.H, newShop NewShop) check.Verdict {
	v := writerLeaves(h, newShop)
	if !v.Pass {
		return v
	}
	w, ok := writerOutOfTime(h, newShop)
	if !w.Pass {
		return w
	}
	if ok {
		return check.Passed(v.Figure + "; " + w.Figure)
	}
	return v
}

// writerOutOfTime is WriterLeaves's second scene: shop-1's write is
// committed as its visitor's deadline passes; then a visitor of each
// instance asks. It catches a tombstone and a PUBLISH sent on a context
// detached from the visitor's cancel but given its deadline back
// (c11-writer-keeps-deadline): past that deadline they fail at once, the
// commit stands, and nobody hears of it. ok is false when the write did
// not commit (code that gives its database call a deadline of the
// visitor's, which has passed before it begins).
func writerOutOfTime(h *harness.H, newShop NewShop) (v check.Verdict, ok bool) {
	s, err := newScene(h, newShop, 3, fleet.HoldCalls(), fleet.HoldCalls())
	if err != nil {
		return fleet.Unreachable(err), false
	}
	defer s.Close()
	if v := s.Warm(0, 1, 2); !v.Pass {
		return v, false
	}
	var out atomic.Pointer[func()]
	s.commits.Then = func(context.Context, string) error { // set before any write comes
		if end := out.Load(); end != nil {
			(*end)()
		}
		return nil
	}
	m := s.Mark()
	shop := s.shops[0]
	w := s.visit(1, func(ctx context.Context) (int, error) {
		ctx, end := harness.DeadlineAt(ctx, s.Clock.Now())
		out.Store(&end)
		return newPrice, shop.SetPrice(ctx, book, newPrice)
	})
	if err := s.Drive(w.Done, patience); err != nil {
		return waitVerdict(err, "shop-1's write was"), false
	}
	if p := w.Panicked(); p != "" {
		return check.Failed("", "shop-1's write panicked: "+p), false
	}
	if s.Truth().Price != newPrice {
		return check.Passed(""), false
	}
	if v := s.Delivered(m); !v.Pass {
		return v, true
	}
	return s.Served("a write whose visitor's deadline passed at its commit", all(3), func(stale []string) string {
		return fmt.Sprintf("shop-1's write of %s committed as its visitor's deadline passed, and then %s still served "+
			"the old price. The commit stands whatever the visitor's deadline says: send the tombstone and the message "+
			"on a context of the write's own, detached from the visitor's (context.WithoutCancel drops its deadline "+
			"too), with a deadline of the write's own, not the visitor's.", cents(newPrice), strings.Join(stale, ", "))
	}), true
}

// writerLeaves is WriterLeaves's first scene.
func writerLeaves(h *harness.H, newShop NewShop) check.Verdict {
	s, err := newScene(h, newShop, 3, fleet.HoldCalls(), fleet.HoldCalls())
	if err != nil {
		return fleet.Unreachable(err)
	}
	defer s.Close()
	if v := s.Warm(0, 1, 2); !v.Pass {
		return v
	}
	// The hook cancels the writer's context itself, at once: by the time
	// the commit returns to the shop, its visitor has left.
	var leave atomic.Pointer[context.CancelFunc]
	s.commits.Then = func(context.Context, string) error { // before any write comes
		if cancel := leave.Load(); cancel != nil {
			(*cancel)()
		}
		return nil
	}
	m := s.Mark()
	shop := s.shops[0]
	w := s.visit(1, func(ctx context.Context) (int, error) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		leave.Store(&cancel)
		return newPrice, shop.SetPrice(ctx, book, newPrice)
	})
	if err := s.Drive(w.Done, patience); err != nil {
		return waitVerdict(err, "shop-1's write was")
	}
	if p := w.Panicked(); p != "" {
		return check.Failed("", "shop-1's write panicked: "+p)
	}
	if s.Truth().Price != newPrice {
		return check.Skipped("shop-1's write did not commit")
	}
	if v := s.Delivered(m); !v.Pass {
		return v
	}
	return s.Served("a write whose visitor left at its commit", all(3), func(stale []string) string {
		return fmt.Sprintf("shop-1's write of %s committed as its visitor left (its context was cancelled at the commit), "+
			"and then %s still served the old price. The commit stands whatever the visitor does: send the tombstone and "+
			"the message on a context of the write's own (context.WithoutCancel, with a deadline), not on the visitor's.",
			cents(newPrice), strings.Join(stale, ", "))
	})
}

// FetchFaults checks that a shared fetch's troubles stay its own: in the
// first scene the visitor who started a fetch leaves while it reads the
// row, and another who joined it must still get the price; in the second
// the fetch's read of the row fails, and the next visitor must get the
// price; in the third the read never answers, and a visitor 21 s later
// must get the price. Redis is empty, so each fetch reads the row. It
// catches a fetch run on its first visitor's context, a failed fetch kept
// for the visitors after it, and a fetch with no deadline, which holds
// the book up on that instance for good.
func FetchFaults(h *harness.H, newShop NewShop) check.Verdict {
	var figures []string
	for _, fault := range []string{"leaves", "fails", "hangs"} {
		v := fetchFault(h, newShop, fault)
		if !v.Pass {
			return v
		}
		figures = append(figures, v.Figure)
	}
	return check.Passed(strings.Join(figures, "; "))
}

// errDown is the error of a read of the row that a scene makes fail.
var errDown = errors.New("the database did not answer (the checker's failure)")

func fetchFault(h *harness.H, newShop NewShop, fault string) check.Verdict {
	reads := fleet.HoldCalls()
	switch fault {
	case "leaves":
		reads = fleet.HoldCalls(1)
	case "fails":
		reads.Then = catalog.RowHook(fleet.NthQuery(fleet.FailWith(errDown), 1))
	case "hangs":
		reads.Then = catalog.RowHook(fleet.NthQuery(fleet.Hang(nil), 1))
	}
	s, err := newScene(h, newShop, 1, reads, fleet.HoldCalls())
	if err != nil {
		return fleet.Unreachable(err)
	}
	defer s.Close()
	first, leave := s.ReadLeaving(0)
	defer leave()
	if err := s.Drive(func() bool { return reads.Calls() > 0 || first.Done() }, patience); err != nil && !errors.Is(err, fleet.ErrNoBound) {
		return stuckVerdict(err)
	}
	var figure, why string
	switch fault {
	case "leaves":
		joined := s.Read(0)
		if err := s.Settle(); err != nil {
			return stuckVerdict(err)
		}
		leave()
		if err := s.Settle(); err != nil {
			return stuckVerdict(err)
		}
		reads.OpenAll()
		if err := s.Drive(joined.Done, patience); err != nil {
			return waitVerdict(err, "the visitor who joined the fetch was")
		}
		figure = "the fetch's first visitor left: the one who joined was served"
		if v := gotOne(joined, "a visitor who joined a fetch whose first visitor then left", oldPrice); !v.Pass {
			return check.Failed(figure, v.Message+". A visitor who leaves ends the wait of no other: run the fetch on a "+
				"context of its own (context.WithoutCancel, with a deadline), not on its first visitor's.")
		}
		return check.Passed(figure)
	case "fails":
		if err := s.Drive(first.Done, patience); err != nil {
			return waitVerdict(err, "the visitor whose fetch failed was")
		}
		figure, why = "a failed fetch, then a visitor", "the fetch before it failed, and the database is fine again: "+
			"a failed fetch must not be kept (take it out of the flights on every path), so the next visitor fetches anew."
	case "hangs":
		if err := s.Elapse(21 * time.Second); err != nil {
			return stuckVerdict(err)
		}
		figure, why = "a fetch with no answer, then a visitor 21 s later", "the fetch before it got no answer from the "+
			"database for 21 s: give a fetch a deadline of its own (at most 20 s), so that the next visitor can try again."
	}
	r := s.Read(0)
	if err := s.Drive(r.Done, patience); err != nil {
		return check.Failed(figure, fmt.Sprintf("the next visitor was still waiting after %v of the shops' clock (%s): %s", patience, r.Where(), why))
	}
	if v := gotOne(r, "the next visitor", oldPrice); !v.Pass {
		return check.Failed(figure, v.Message+": "+why)
	}
	return check.Passed(figure)
}

// ListenReturns checks that Listen returns once its context ends, as a
// server's shutdown asks: two instances listen, write and read; then their
// Listen contexts end. It catches a loop over the subscription's channel
// that never looks at its context.
func ListenReturns(h *harness.H, newShop NewShop) check.Verdict {
	s, err := newScene(h, newShop, 2, fleet.HoldCalls(), fleet.HoldCalls())
	if err != nil {
		return fleet.Unreachable(err)
	}
	defer s.Close()
	if v := s.Warm(0, 1); !v.Pass {
		return v
	}
	if v := s.WriteDone(0, newPrice); !v.Pass {
		return v
	}
	s.stop()
	err = s.Drive(func() bool { return fleet.AllDone(s.listens) }, time.Second)
	switch {
	case !fleet.AllDone(s.listens):
		// Still inside, whether the clock went on (ErrNoBound) or
		// nothing was left to wake them (a deadlock).
		var still []string
		for i, l := range s.listens {
			if !l.Done() {
				still = append(still, fmt.Sprintf("shop-%d's (%s)", i+1, l.Where()))
			}
		}
		return check.Failed("", fmt.Sprintf("the Listen contexts ended, and %s Listen had not returned. "+
			"A server stops an instance by ending that context: select on ctx.Done() beside the subscription's "+
			"channel, close the subscription, and return.", strings.Join(still, " and ")))
	case err != nil:
		return stuckVerdict(err)
	}
	for i, l := range s.listens {
		if p := l.Panicked(); p != "" {
			return check.Failed("", fmt.Sprintf("shop-%d's Listen panicked: %s", i+1, p))
		}
	}
	return check.Passed("")
}

// LocalTTL checks that a copy lives at most 10 s, message or not. Shop-1
// holds a copy; the row changes and Redis's key is deleted, with no
// message (a fix made by hand, or a message lost); a visitor comes every
// second for 10 s; then, 10 s after the copy was filled, one more. It must
// get the new price. It catches a copy with no time to live, one longer
// than 10 s (the shipped code's 30 s), and one whose time to live starts
// again at each hit.
func LocalTTL(h *harness.H, newShop NewShop) check.Verdict {
	v := localTTL(h, newShop)
	if !v.Pass {
		return v
	}
	w := expiredWhileDown(h, newShop)
	if !w.Pass {
		return w
	}
	return check.Passed(v.Figure + "; " + w.Figure)
}

// errRedisDown is what a command returns while expiredWhileDown's Redis
// fails every command.
var errRedisDown = errors.New("read tcp 127.0.0.1:6379: i/o timeout (planned by the checker)")

// expiredWhileDown is LocalTTL's second scene: shop-1 holds a copy; the
// row changes and Redis's key goes, with no message; then Redis fails
// every command of shop-1's, and 10 s after the copy was filled a visitor
// asks. It may get an error, or the new price from the row; not the old
// price from a copy past its time. It catches a copy served past its time
// to live whenever the fetch that should replace it fails
// (c11-stale-on-error): through a Redis outage, which loses every message
// too, each instance serves what it had before it, for as long as the
// outage lasts.
func expiredWhileDown(h *harness.H, newShop NewShop) check.Verdict {
	s, err := newScene(h, newShop, 1, fleet.HoldCalls(), fleet.HoldCalls())
	if err != nil {
		return fleet.Unreachable(err)
	}
	defer s.Close()
	if v := s.Warm(0); !v.Pass {
		return v
	}
	// The copy's 10 s count from now, as in localTTL.
	if _, err := s.db.SetPrice(h.Context(), book, newPrice); err != nil {
		return check.Failed("", "the checker could not change the row: "+err.Error())
	}
	if err := s.World.DeleteAll(h.Context()); err != nil {
		return fleet.Unreachable(err)
	}
	s.taps[0].Fail(fleet.Command.Keyed, errRedisDown, -1)
	if err := s.Elapse(maxLocal + time.Millisecond); err != nil {
		return stuckVerdict(err)
	}
	r := s.Read(0)
	if err := s.Drive(r.Done, patience); err != nil {
		return waitVerdict(err, "shop-1's visitor was")
	}
	figure := "a copy past its time, Redis down"
	o := r.Outcomes()[0]
	if o.Panic != "" {
		return check.Failed(figure, "shop-1's visitor's call panicked: "+o.Panic)
	}
	if o.Err == nil && o.Value == oldPrice {
		return check.Failed(figure, fmt.Sprintf("the row changed to %s with no message (as after a message lost), and "+
			"then Redis failed every command of shop-1's. %.0f s after shop-1 filled its copy, a visitor got %s from "+
			"it: the copy was served past its time because the fetch that should have replaced it failed. A Redis "+
			"outage loses the messages too, so every instance would serve what it had before it for as long as the "+
			"outage lasts. A copy past its time is not a price: answer the fetch's error (or read the row).",
			cents(newPrice), (maxLocal+time.Millisecond).Seconds(), cents(oldPrice)))
	}
	if o.Err == nil && o.Value != newPrice {
		return check.Failed(figure, fmt.Sprintf("shop-1's visitor got %s; the price was %s", cents(o.Value), cents(newPrice)))
	}
	return check.Passed(figure)
}

// localTTL is LocalTTL's first scene.
func localTTL(h *harness.H, newShop NewShop) check.Verdict {
	s, err := newScene(h, newShop, 1, fleet.HoldCalls(), fleet.HoldCalls())
	if err != nil {
		return fleet.Unreachable(err)
	}
	defer s.Close()
	if v := s.Warm(0); !v.Pass {
		return v
	}
	// The copy is stored as its visitor returns: its 10 s count from now,
	// not from when the visitor came (its fill read the row for 0.2 s).
	filled := s.Clock.Now()
	if _, err := s.db.SetPrice(h.Context(), book, newPrice); err != nil {
		return check.Failed("", "the checker could not change the row: "+err.Error())
	}
	if err := s.World.DeleteAll(h.Context()); err != nil {
		return fleet.Unreachable(err)
	}
	for s.Clock.Now().Sub(filled) < maxLocal-time.Second {
		if err := s.Elapse(time.Second); err != nil {
			return stuckVerdict(err)
		}
		r := s.Read(0)
		if err := s.Drive(r.Done, patience); err != nil {
			return waitVerdict(err, "shop-1's visitor was")
		}
		if v := gotOne(r, "shop-1's visitor", oldPrice, newPrice); !v.Pass {
			return v
		}
	}
	if err := s.Elapse(maxLocal - s.Clock.Now().Sub(filled) + time.Millisecond); err != nil {
		return stuckVerdict(err)
	}
	return s.Served("a change with no message, a visitor a second", []int{0}, func([]string) string {
		return fmt.Sprintf("the row changed to %s with no message (as after a message lost), and a visitor came "+
			"every second; %.0f s after shop-1 filled its copy, a visitor still got %s from it. A copy must live at "+
			"most %.0f s, and its time counts from its fill, not from its last hit: that bound is all that limits "+
			"what a lost message costs.", cents(newPrice), maxLocal.Seconds(), cents(oldPrice), maxLocal.Seconds())
	})
}

// LocalHits checks that a visitor served from the instance's copy sends
// Redis nothing, and waits for nothing. Shop-1 holds a copy; 20 visitors
// ask at once. Then, in a second scene, a write on shop-1 drops shop-2's
// copy, one visitor of shop-2 fills it again, and 20 more ask. In a
// third, shop-1 holds a copy while its fetch of another book is held at
// the database; a visitor of the first book must be answered at once. It
// catches a copy checked against Redis on every hit (a GET of a version,
// an EXISTS, a TTL), which spares Redis nothing; a fill after a write that
// is never kept (a floor compared with >); and a lock held across a fetch,
// which makes every hit of the instance wait for it.
func LocalHits(h *harness.H, newShop NewShop) check.Verdict {
	var figures []string
	for _, afterWrite := range []bool{false, true} {
		v := localHits(h, newShop, afterWrite)
		if !v.Pass {
			return v
		}
		figures = append(figures, v.Figure)
	}
	v := hitDuringFetch(h, newShop)
	if !v.Pass {
		return v
	}
	return check.Passed(strings.Join(append(figures, v.Figure), "; "))
}

func localHits(h *harness.H, newShop NewShop, afterWrite bool) check.Verdict {
	s, err := newScene(h, newShop, 2, fleet.HoldCalls(), fleet.HoldCalls())
	if err != nil {
		return fleet.Unreachable(err)
	}
	defer s.Close()
	i, price, when := 0, oldPrice, "with a copy in memory"
	if v := s.Warm(0); !v.Pass {
		return v
	}
	if afterWrite {
		i, price, when = 1, newPrice, "with a copy filled after a write"
		if v := s.Warm(1); !v.Pass {
			return v
		}
		if v := s.WriteDone(0, newPrice); !v.Pass {
			return v
		}
		r := s.Read(1)
		if err := s.Drive(r.Done, patience); err != nil {
			return waitVerdict(err, "shop-2's visitor after the write was")
		}
		// Whether that price is the new one is invalidate's business;
		// this scene counts what the next visitors cost.
		if v := gotOne(r, "shop-2's visitor after the write", oldPrice, newPrice); !v.Pass {
			return v
		}
		price = r.Outcomes()[0].Value
	}
	since := len(s.taps[i].Log())
	r := s.Reads(i, burst)
	if err := s.Drive(r.Done, patience); err != nil {
		return waitVerdict(err, fmt.Sprintf("shop-%d's visitors were", i+1))
	}
	if v := gotOne(r, fmt.Sprintf("a visitor of shop-%d", i+1), price); !v.Pass {
		return v
	}
	sent := s.sent(i, since)
	figure := fmt.Sprintf("%d visitors %s: %s to Redis", burst, when, fleet.Count(len(sent), "command"))
	if len(sent) == 0 {
		return check.Passed(figure)
	}
	if afterWrite {
		return check.Failed(figure, fmt.Sprintf("shop-1 wrote %s, and shop-2's next visitor fetched it again; then %d visitors of "+
			"shop-2 sent Redis %s (%s): the fill after the write was not kept. A fill of the version the message "+
			"announced is as new as it gets: keep it (store when its version is at least the floor, not above it).",
			cents(newPrice), burst, fleet.Count(len(sent), "command"), s.sentAfter(i, since)))
	}
	return check.Failed(figure, fmt.Sprintf("shop-1 held a copy of the price, and %d visitors asking for it sent Redis %s (%s). "+
		"A hit on the copy must cost no round trip: that is what the copy is for. Serve it from memory, "+
		"and leave keeping it right to the messages and its time to live.", burst, fleet.Count(len(sent), "command"), s.sentAfter(i, since)))
}

// hitDuringFetch is LocalHits' third scene.
func hitDuringFetch(h *harness.H, newShop NewShop) check.Verdict {
	// The warm-up reads the row once; the second read, the other book's,
	// waits at its gate.
	s, err := newScene(h, newShop, 1, fleet.HoldCalls(2), fleet.HoldCalls())
	if err != nil {
		return fleet.Unreachable(err)
	}
	defer s.Close()
	if v := s.Warm(0); !v.Pass {
		return v
	}
	other := otherBook()
	gate := s.reads.Gate(2)
	shop := s.shops[0]
	o := s.visit(1, func(ctx context.Context) (int, error) { return shop.Price(ctx, other.Book) })
	if err := s.Settle(); err != nil {
		return stuckVerdict(err)
	}
	if s.reads.Calls() < 2 {
		// No read of the other book's row to hold it behind: the scene
		// did not happen, and the figure says so.
		return check.Passed("no fetch of another book read the row, so no hit waited behind one")
	}
	r := s.Read(0)
	if err := s.Settle(); err != nil {
		return stuckVerdict(err)
	}
	if !r.Done() {
		return check.Failed("", fmt.Sprintf("shop-1 held a copy of %s's price; while its fetch of %s waited on the database, a visitor of "+
			"%s was not answered from the copy: it waited too (%s). Never hold the instance's lock across a fetch: "+
			"take it to look, and again to store.", book, other.Book, book, r.Where()))
	}
	gate.Open()
	if err := s.Drive(o.Done, patience); err != nil {
		return waitVerdict(err, "shop-1's visitor of "+other.Book+" was")
	}
	if v := gotOne(r, "shop-1's visitor of "+book, oldPrice); !v.Pass {
		return v
	}
	return check.Passed("a hit while another book's fetch waits: answered at once")
}

// OneRead checks that the visitors of one instance who miss one book at
// once share one fetch: 20 visitors of shop-1, with no copy, ask at once,
// the first command (or read of the row) held until every one has come.
// Redis holds the price in the first scene (one read of Redis, at most),
// and nothing in the second (one read of the row). It catches a near
// cache with no flight: every visitor of a miss goes to Redis, and on a
// cold Redis to the database.
func OneRead(h *harness.H, newShop NewShop) check.Verdict {
	var figures []string
	for _, warm := range []bool{true, false} {
		v := oneRead(h, newShop, warm)
		if !v.Pass {
			return v
		}
		figures = append(figures, v.Figure)
	}
	v := twoBooks(h, newShop)
	if !v.Pass {
		return v
	}
	figures = append(figures, v.Figure)
	if v := oneReadLeaving(h, newShop); !v.Pass {
		return v
	} else if v.Figure != "" {
		figures = append(figures, v.Figure)
	}
	played, v := inStep(stepLeads, func(reverse bool, lead int) (check.Verdict, bool) {
		return oneReadInStep(h, newShop, reverse, lead)
	})
	if !v.Pass {
		return v
	}
	if played > 0 {
		figures = append(figures, fmt.Sprintf("two visitors missing at one instant, in lockstep: one read of Redis in %d plays", played))
	}
	return check.Passed(strings.Join(figures, "; "))
}

// oneReadLeaving is OneRead's scene of a visitor who leaves: Redis is
// empty and the row's reads are held; shop-1's first visitor misses and
// starts the fetch, a second joins it, the first leaves, and then a third
// comes. The fetch is still the second's: the third must share it, one
// read of the row in all, and both must get the price. It catches a fetch
// taken off the table when the visitor who started it leaves
// (c11-leaver-drops-flight): each visitor who gives up on a slow read
// makes the next one start another, as many reads of the row at once as
// visitors came and left. Its figure is "" when the first visitor's fetch
// never reached the row.
func oneReadLeaving(h *harness.H, newShop NewShop) check.Verdict {
	reads := fleet.HoldEvery()
	s, err := newScene(h, newShop, 1, reads, fleet.HoldCalls())
	if err != nil {
		return fleet.Unreachable(err)
	}
	defer s.Close()
	rowsBefore := s.db.RowReads(book)
	first, leave := s.ReadLeaving(0)
	if err := s.Drive(func() bool { return reads.Calls() > 0 || first.Done() }, patience); err != nil {
		return waitVerdict(err, "shop-1's first visitor was")
	}
	if reads.Calls() == 0 {
		return check.Passed("")
	}
	second := s.Read(0)
	if err := s.Settle(); err != nil {
		return stuckVerdict(err)
	}
	leave()
	if err := s.Settle(); err != nil {
		return stuckVerdict(err)
	}
	third := s.Read(0)
	if err := s.Settle(); err != nil {
		return stuckVerdict(err)
	}
	reads.OpenAll()
	if err := s.Drive(func() bool { return first.Done() && second.Done() && third.Done() }, patience); err != nil {
		return waitVerdict(err, "shop-1's visitors were")
	}
	if v := gotOne(second, "shop-1's second visitor, who stayed", oldPrice); !v.Pass {
		return v
	}
	if v := gotOne(third, "shop-1's third visitor", oldPrice); !v.Pass {
		return v
	}
	n := s.db.RowReads(book) - rowsBefore
	figure := fmt.Sprintf("a fetch's first visitor gone, another waiting, a third coming: %s of the row", fleet.Count(n, "read"))
	if n > 1 {
		return check.Failed(figure, fmt.Sprintf("with Redis empty, shop-1's first visitor missed and its fetch read the row "+
			"(held there); a second visitor joined it; then the first left (its context cancelled), and a third came. "+
			"The row was read %d times: the fetch was the second visitor's too, and the third should have shared it. A "+
			"visitor who leaves takes only itself away: leave the fetch on the table for as long as anyone waits on it "+
			"(or, if the last one leaves, end it), or every visitor who gives up on a slow read makes the next one start "+
			"another.", n))
	}
	return check.Passed(figure)
}

// inStep plays a lockstep scene once for each head start of leads and
// each order, and returns how many plays were staged (ok), or the first
// verdict that did not pass.
func inStep(leads []int, play func(reverse bool, lead int) (check.Verdict, bool)) (int, check.Verdict) {
	staged := 0
	for _, lead := range leads {
		for _, reverse := range []bool{false, true} {
			v, ok := play(reverse, lead)
			if !v.Pass {
				return staged, v
			}
			if ok {
				staged++
			}
		}
	}
	return staged, check.Passed("")
}

// stepLeads are the head starts oneReadInStep plays: two visitors of one
// path meet at their look with no head start, and with one statement's
// (each of 0 to 3 caught c11-flight-check-then-act on its own; two keep
// the check's time).
var stepLeads = []int{0, 1}

// oneReadInStep is OneRead's scene of two visitors of shop-1 who miss at
// one instant, taking turns one statement each (point.LockstepAfter, the
// first lead steps ahead): Redis holds the price, and shop-1's commands
// wait until both have come. At most one read of Redis. It catches a look
// for a fetch under one lock and its start under another
// (c11-flight-check-then-act): both look before either starts, and each
// starts its own. ok is false when shop-1 sent Redis nothing.
func oneReadInStep(h *harness.H, newShop NewShop, reverse bool, lead int) (check.Verdict, bool) {
	s, err := newScene(h, newShop, 2, fleet.HoldCalls(), fleet.HoldCalls())
	if err != nil {
		return fleet.Unreachable(err), false
	}
	defer s.Close()
	if v := s.Warm(1); !v.Pass { // Redis holds the price, shop-1 no copy
		return v, false
	}
	since := len(s.taps[0].Log())
	resume := s.taps[0].Pause()
	defer resume()
	var r *harness.Crowd[int]
	v := h.Under(point.LockstepAfter(reverse, lead), func() check.Verdict {
		r = s.Reads(0, 2)
		if err := s.Settle(); err != nil {
			return stuckVerdict(err)
		}
		return check.Passed("")
	})
	resume()
	if !v.Pass {
		return v, true
	}
	if err := s.Drive(r.Done, patience); err != nil {
		return waitVerdict(err, "shop-1's two visitors were"), true
	}
	if v := gotOne(r, "a visitor of shop-1", oldPrice); !v.Pass {
		return v, true
	}
	n := 0
	for _, c := range s.sent(0, since) {
		if fleet.ReadOnly(c.Name) && len(c.Keys) > 0 {
			n++
		}
	}
	if n == 0 {
		return check.Passed(""), false
	}
	if n > 1 {
		return check.Failed(fmt.Sprintf("%d reads of Redis for two visitors in lockstep", n), fmt.Sprintf("two visitors of "+
			"shop-1 missed its copy at one instant, taking turns one statement each, and shop-1 read Redis %d times "+
			"for them (%s): each looked for a fetch under way, found none, and started its own. Look for the fetch "+
			"and put yours on the table in one critical section, so that the second visitor finds the first one's.",
			n, s.sentAfter(0, since))), true
	}
	return check.Passed(""), true
}

func oneRead(h *harness.H, newShop NewShop, warm bool) check.Verdict {
	reads := fleet.HoldEvery()
	if warm {
		reads = fleet.HoldCalls()
	}
	s, err := newScene(h, newShop, 2, reads, fleet.HoldCalls())
	if err != nil {
		return fleet.Unreachable(err)
	}
	defer s.Close()
	if warm {
		if v := s.Warm(1); !v.Pass {
			return v
		}
	}
	since := len(s.taps[0].Log())
	rowsBefore := s.db.RowReads(book)
	var resume func()
	if warm {
		// Every command of shop-1 waits until all the visitors have
		// come: each visitor with a fetch of its own has sent one.
		resume = s.taps[0].Pause()
		defer resume()
	}
	r := s.Reads(0, burst)
	if err := s.Settle(); err != nil {
		return stuckVerdict(err)
	}
	if warm {
		resume()
	} else {
		reads.OpenAll()
	}
	if err := s.Drive(r.Done, patience); err != nil {
		return waitVerdict(err, "shop-1's visitors were")
	}
	if v := gotOne(r, "a visitor of shop-1", oldPrice); !v.Pass {
		return v
	}
	if warm {
		n := 0
		for _, c := range s.sent(0, since) {
			if fleet.ReadOnly(c.Name) && len(c.Keys) > 0 {
				n++
			}
		}
		figure := fmt.Sprintf("%d visitors missing one book, Redis warm: %s of Redis", burst, fleet.Count(n, "read"))
		if n > 1 {
			return check.Failed(figure, fmt.Sprintf("%d visitors of shop-1 missed its copy at once, and shop-1 read Redis %d times "+
				"for them (%s). Its visitors of one book should share one fetch (a flight, as in cases 1 to 6): "+
				"otherwise every miss of a hot key is a round trip to Redis, once per visitor.", burst, n, s.sentAfter(0, since)))
		}
		return check.Passed(figure)
	}
	n := s.db.RowReads(book) - rowsBefore
	figure := fmt.Sprintf("%d visitors missing one book, Redis empty: %s of the row", burst, fleet.Count(n, "read"))
	if n > 1 {
		return check.Failed(figure, fmt.Sprintf("%d visitors of shop-1 missed at once with Redis empty, and shop-1 read the row %d times. "+
			"Its visitors of one book should share one fetch (a flight): one read of Redis, and on a miss one read of the row.", burst, n))
	}
	return check.Passed(figure)
}

// twoBooks checks that visitors of two books who miss at once on one
// instance each get their own book's price: a flight keyed by anything
// less than the book hands one book's price to the other's visitors.
func twoBooks(h *harness.H, newShop NewShop) check.Verdict {
	s, err := newScene(h, newShop, 1, fleet.HoldEvery(), fleet.HoldCalls())
	if err != nil {
		return fleet.Unreachable(err)
	}
	defer s.Close()
	other := otherBook()
	a := s.Reads(0, 2)
	shop := s.shops[0]
	b := s.visit(2, func(ctx context.Context) (int, error) { return shop.Price(ctx, other.Book) })
	if err := s.Settle(); err != nil {
		return stuckVerdict(err)
	}
	s.reads.OpenAll()
	if err := s.Drive(func() bool { return a.Done() && b.Done() }, patience); err != nil {
		return waitVerdict(err, "shop-1's visitors were")
	}
	if v := gotOne(a, "a visitor of "+book, oldPrice); !v.Pass {
		return check.Failed("", v.Message+fmt.Sprintf(" (visitors of %s and %s missed at once: a shop's fetches must be one per book)", book, other.Book))
	}
	if v := gotOne(b, "a visitor of "+other.Book, other.Price); !v.Pass {
		return check.Failed("", v.Message+fmt.Sprintf(" (visitors of %s and %s missed at once: a shop's fetches must be one per book)", book, other.Book))
	}
	return check.Passed("two books missed at once: each its own price")
}

// otherBook returns a book of the catalog other than the scenes' book,
// with its first price.
func otherBook() catalog.Row {
	for _, b := range catalog.Priced() {
		if b != book {
			row, _ := catalog.New().Peek(b)
			return row
		}
	}
	panic("the catalog has one book")
}

// sentAfter lists the commands instance i sent from place since in its
// log, for a message.
func (s *scene) sentAfter(i, since int) string {
	var sent []string
	for _, c := range s.sent(i, since) {
		sent = append(sent, fleet.Shorten(c.String()))
	}
	if len(sent) == 0 {
		return "nothing"
	}
	return strings.Join(sent, " | ")
}

// sent returns the commands instance i sent from place since in its log,
// but those go-redis sends on a new connection of its own (HELLO).
func (s *scene) sent(i, since int) []fleet.Command {
	var out []fleet.Command
	for _, c := range s.taps[i].Log()[since:] {
		if c.Name != "hello" {
			out = append(out, c)
		}
	}
	return out
}

// nthSent matches the k-th command (from 1) an instance sends from now on,
// counting every command but HELLO: a PUBLISH names no key, yet it is one
// of the write's steps.
func nthSent(k int) func(fleet.Command) bool {
	seen := 0
	return func(c fleet.Command) bool {
		if c.Name == "hello" {
			return false
		}
		seen++
		return seen == k
	}
}
