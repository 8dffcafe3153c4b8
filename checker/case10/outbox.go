package case10

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"stampede/checker/check"
	"stampede/checker/fleet"
	"stampede/checker/harness"
	"stampede/checker/stack"
)

// Relayer is the outbox relay the contract asks of a shop instance: Relay
// runs until ctx ends, sending the delete of each invalidation the
// database's outbox holds (catalog.DB.Pending) and marking it sent. It is
// apart from Shop so that a shop without one still compiles; the outbox
// check fails it.
type Relayer interface {
	Relay(ctx context.Context) error
}

// outboxInfo is the check that a write's delete comes even when the writer
// dies right after its commit.
var outboxInfo = check.Info{
	ID: "outbox",
	Name: "a writer cut off from Redis right after its commit: another instance's relay sends its delete " +
		"from the outbox within a second, and again after a failed delete",
	Catches: "no relay (the old price stays for its whole time to live), a relay that sends only its own " +
		"instance's deletes, one that deletes the price but not the lease (a fill that read before the commit " +
		"stores the old price), one that marks a row sent before its delete succeeded or gives up at the first " +
		"failure, one that looks at the outbox more often than every 50 ms, one that does not return when " +
		"its context ends, one that sends each row on a goroutine of its own and waits for none, so that " +
		"they pile up while Redis stalls (wrong/relay-go-per-row), relays that claim a row for longer than " +
		"the delivery may take (wrong/relay-claim-30s), a write that marks its book's other rows sent " +
		"with its own delete (wrong/setprice-marks-book), a backoff with no cap or one past 2 s " +
		"(wrong/relay-backoff-uncapped, wrong/relay-backoff-cap-5s), a relay that sends only the newest " +
		"row's delete and marks every row sent (wrong/relay-newest-only), and one that gives a row up " +
		"after a few failed deletes (wrong/relay-drops-row-after-3), and one that deletes the price and then " +
		"the lease in two commands, where a fill between them stores the old price (wrong/relay-two-dels), and " +
		"a relay whose pass has no deadline, which waits for good on a delete stalled on the network " +
		"(wrong/relay-pass-no-deadline)",
}

const (
	// relayWithin is how long after the commit, on the shops' clock, the
	// outbox may still hold a write's invalidation: the contract's look
	// every 100 ms or so, with room.
	relayWithin = time.Second
	// retryWithin is relayWithin when the relay's first delete fails: a
	// relay that backs off from a failing Redis tries again well within it.
	retryWithin = 2 * time.Second
	// idleFor is how long the idle scene watches a relay with nothing to
	// send, and idleLooks how many looks at the outbox it may take then:
	// one every 50 ms, the contract's limit, and one more.
	idleFor   = 2 * time.Second
	idleLooks = int(idleFor/(50*time.Millisecond)) + 1
	// stopWithin is how long a relay may take to return once its context
	// has ended.
	stopWithin = time.Second
	// stallFor is how long shop-2's Redis stalls in its scene, and
	// stallGoroutines how many more goroutines in the shop's code the
	// scene's instances may have by then than before the write: the
	// writer's, and one more each, with room. A relay that starts a
	// goroutine per row and look, and waits for none, has one more every
	// look.
	stallFor        = time.Second
	stallGoroutines = 4
)

// Outbox checks the outbox relay. An idle relay looks at the outbox at
// most every 50 ms, sends nothing, and returns when its context ends.
// Then, in five scenes, shop-1's write is cut off from Redis (Tap.Pause)
// just as it commits, as an instance that dies after its commit, so only
// the outbox can bring its delete: with the old price cached; with a
// filler on shop-2 that read the row before the commit and stores after
// the relay; with shop-2's first delete failing; with shop-2's Redis
// stalled for stallFor after the commit, during which the instances may
// have at most stallGoroutines more goroutines in the shop's code; and,
// its own delete failing, cut off only once Redis has answered its
// relay's first command (a claim on the row, say). Each time the outbox
// must be empty within relayWithin of the commit (retryWithin
// after the failure, relayWithin after the stall), and a visitor after it
// must get the new price. Then relaySteps lets such a filler fill before
// each of one relay's commands in turn. Then laterWriterCutOff cuts off the later of two
// writes of the book while the earlier is finishing, and relayRecovers
// asks for a delete within a second after a spell of Redis trouble.
func Outbox(h *harness.H, newShop NewShop) check.Verdict {
	if v := idleRelay(h, newShop); !v.Pass {
		return v
	}
	var unstaged string
	for _, how := range []cutOff{oldCached, fillerBefore, deleteFails, redisStalls, ownRelayFirst, deleteBlackHoled} {
		v := writerCutOff(h, newShop, how)
		if !v.Pass {
			return v
		}
		if v.Figure != "" {
			unstaged = "; " + v.Figure
		}
	}
	v, steps := relaySteps(h, newShop)
	if !v.Pass {
		return v
	}
	if v := laterWriterCutOff(h, newShop); !v.Pass {
		return v
	}
	if v := relayRecovers(h, newShop); !v.Pass {
		return v
	}
	return check.Passed("a writer cut off from Redis as it committed was invalidated by another instance's " +
		"relay within a second, with the old price cached, with a filler that had read the row before the " +
		"commit, after the relay's first delete failed, and after its Redis stalled for a second (with no pile " +
		"of goroutines meanwhile), after its first delete was held in a network's black hole, with such a filler let fill before each of the relay's commands, and each of its commands failing once " +
		"(" + fleet.Count(steps, "scene") + "), and when a later write's writer died while an earlier write was still " +
		"finishing, and within a second again once Redis had refused every delete for 8 s (meanwhile trying again " +
		"at most 2 s apart, and then with two books' old prices gone); an idle relay looked " +
		"at the outbox at most every 50 ms and returned when told to stop" + unstaged)
}

// relays are the scene's instances' relays, each run as a visitor of its
// own until stop.
type relays struct {
	crowds []*harness.Crowd[int]
	on     []int // the instance of each crowd
	stop   context.CancelFunc
}

// startRelays runs the Relay of every instance of the scene, or of the
// instances named by on. It fails when an instance has none.
func (s *scene) startRelays(on ...int) (*relays, check.Verdict) {
	ctx, stop := context.WithCancel(context.Background())
	r := &relays{stop: stop}
	if on == nil {
		for i := range s.shops {
			on = append(on, i)
		}
	}
	for _, i := range on {
		relayer, ok := s.shops[i].(Relayer)
		if !ok {
			stop()
			return nil, check.Failed("", "the shop has no Relay method: add func (s *Shop) Relay(ctx "+
				"context.Context) error, which sends the outbox's deletes until ctx ends (see the contract "+
				"in cases/case10/shop.go)")
		}
		r.on = append(r.on, i)
		r.crowds = append(r.crowds, s.visit(1, func(visit context.Context) (int, error) {
			visit, cancel := context.WithCancel(visit)
			defer cancel()
			defer context.AfterFunc(ctx, cancel)()
			return i, relayer.Relay(visit)
		}))
	}
	return r, check.Passed("")
}

// early fails when a relay has returned, or panicked, before it was told
// to stop.
func (r *relays) early() check.Verdict {
	for j, c := range r.crowds {
		if !c.Done() {
			continue
		}
		i, o := r.on[j], c.Outcomes()[0]
		if o.Panic != "" {
			return check.Failed("", fmt.Sprintf("shop-%d's Relay panicked: %s", i+1, o.Panic))
		}
		return check.Failed("", fmt.Sprintf("shop-%d's Relay returned (%v) before its context ended: a relay "+
			"runs until the server stops it, and a failed delete is tried again, not the end of the relay", i+1, o.Err))
	}
	return check.Passed("")
}

// done reports whether every relay has returned.
func (r *relays) done() bool {
	for _, c := range r.crowds {
		if !c.Done() {
			return false
		}
	}
	return true
}

// awaitOutbox drives the scene until the outbox is empty, for at most
// within, and reports whether it was by then. It fails when a relay returned
// before it was told to stop, or the shop never came to rest. Out of
// time, or with nothing left asleep on the clock, no relay was looking:
// the outbox is not empty, and the caller says what that means.
func (s *scene) awaitOutbox(r *relays, within time.Duration) (bool, check.Verdict) {
	start := s.Clock.Now()
	err := s.Drive(func() bool { return len(s.db.Unsent()) == 0 || !r.early().Pass }, within)
	if v := r.early(); !v.Pass {
		return false, v
	}
	var stuck *harness.Stuck
	if errors.As(err, &stuck) && stuck.Cause == harness.Running {
		return false, stuckVerdict(err)
	}
	// Drive stops at the first wake-up that finds the outbox empty, which
	// may come after within: a relay that looks every 2 s empties it 2 s
	// after a commit that came just after a look.
	return err == nil && s.Clock.Now().Sub(start) <= within, check.Passed("")
}

// idleRelay is the first scene of Outbox: one instance's relay with
// nothing to send, for idleFor, and then told to stop.
func idleRelay(h *harness.H, newShop NewShop) check.Verdict {
	s, err := newScene(h, newShop, 1, fleet.HoldCalls(), fleet.HoldCalls())
	if err != nil {
		return fleet.Unreachable(err)
	}
	defer s.Close()
	r, v := s.startRelays()
	if !v.Pass {
		return v
	}
	defer r.stop()
	looks := s.db.OutboxReads()
	if err := s.Elapse(idleFor); err != nil {
		return stuckVerdict(err)
	}
	if v := r.early(); !v.Pass {
		return v
	}
	if n := s.db.OutboxReads() - looks; n > idleLooks {
		return check.Failed("", fmt.Sprintf("with nothing to send, shop-1's relay looked at the outbox %d times "+
			"in %v (at most %d: once every 50 ms): each look is a query, on every instance of the fleet; "+
			"sleep on the clock New is given between looks, about 100 ms", n, idleFor, idleLooks))
	}
	if sent := s.sentAfter(0, 0); sent != "nothing" {
		return check.Failed("", "with nothing in the outbox, shop-1's relay sent to Redis: "+sent)
	}
	r.stop()
	if err := s.Drive(r.done, stopWithin); err != nil {
		return check.Failed("", fmt.Sprintf("shop-1's Relay had not returned %v after its context ended: the server "+
			"waits for it when it shuts down; return once ctx is done (the clock's Sleep returns ctx's error)", stopWithin))
	}
	return check.Passed("")
}

// cutOff is how a scene of Outbox stages the cut-off writer.
type cutOff int

const (
	oldCached    cutOff = iota // the old price is cached
	fillerBefore               // a filler read the row before the commit, and is held
	deleteFails                // the old price is cached, and the relay's first delete fails
	redisStalls                // the old price is cached, and shop-2's Redis stalls a while
	// The old price is cached; shop-1's own delete fails, and shop-1 is
	// cut off once its relay's first command has been answered.
	ownRelayFirst
	// The old price is cached, and shop-2's relay's first delete is held on
	// its way until the context it was sent on ends, as in a network's
	// black hole: a relay whose pass has no deadline waits there for good.
	deleteBlackHoled
)

// writerCutOff is one scene of Outbox.
func writerCutOff(h *harness.H, newShop NewShop, how cutOff) check.Verdict {
	s, err := newScene(h, newShop, 2, fleet.HoldCalls(1), fleet.HoldCalls())
	if err != nil {
		return fleet.Unreachable(err)
	}
	defer s.Close()
	var filler *harness.Crowd[int]
	if how == fillerBefore {
		filler = s.Read(1)
		if err := s.Drive(func() bool { return s.reads.Calls() > 0 || filler.Done() }, patience); err != nil {
			return waitVerdict(err, "shop-2's visitor, with Redis empty, was")
		}
		if s.reads.Calls() == 0 {
			return check.Failed("", "shop-2's visitor, with Redis empty, never read the row")
		}
	} else {
		s.reads.Gate(1).Open()
		if v := s.warm(1); !v.Pass {
			return v
		}
	}
	r, v := s.startRelays()
	if !v.Pass {
		return v
	}
	defer r.stop()
	switch how {
	case deleteFails:
		// The first command of shop-2 that may write, its relay's delete
		// (shop-2 has no visitor now), fails as a dropped connection does.
		s.taps[1].Fail(func(c fleet.Command) bool { return !fleet.ReadOnly(c.Name) }, errRedis, 1)
	case deleteBlackHoled:
		defer s.taps[1].HoldUntilDone(func(c fleet.Command) bool { return !fleet.ReadOnly(c.Name) }).Release()
	}
	// resume lets shop-1's commands through again, and unstall shop-2's:
	// set on the writer's goroutine, called on the checker's.
	var resume, unstall atomic.Pointer[func()]
	defer call(&resume)
	defer call(&unstall)
	var armed, cut atomic.Bool
	s.commits.Then = func(context.Context, string) error {
		if !armed.CompareAndSwap(false, true) {
			return nil
		}
		if how != ownRelayFirst {
			r := s.taps[0].Pause() // nothing shop-1 sends from now on reaches Redis
			resume.Store(&r)
			if how == redisStalls {
				r := s.taps[1].Pause() // nor shop-2, for stallFor
				unstall.Store(&r)
			}
			return nil
		}
		// Shop-1's own delete fails; shop-2 waits, so that shop-1's relay
		// acts first; and once Redis has answered shop-1's next command
		// (its relay's: a delete, or a claim on the row), shop-1 is cut
		// off and shop-2 goes on.
		r := s.taps[1].Pause()
		unstall.Store(&r)
		s.taps[0].Fail(func(c fleet.Command) bool { return !fleet.ReadOnly(c.Name) }, errRedis, 1)
		s.taps[0].Note(func(c fleet.Command) {
			// A script's EVALSHA that Redis did not know did nothing:
			// the EVAL after it is the command.
			if len(c.Keys) == 0 || c.NoScript || !cut.CompareAndSwap(false, true) {
				return
			}
			r := s.taps[0].Pause()
			resume.Store(&r)
			call(&unstall)
		})
		return nil
	}
	before, _ := s.shopGoroutines()
	s.Write(0, newPrice)
	if err := s.Drive(func() bool { return s.Truth().Price == newPrice }, patience); err != nil {
		return waitVerdict(err, "shop-1's write was")
	}
	if how == redisStalls {
		if err := s.Elapse(stallFor); err != nil {
			return stuckVerdict(err)
		}
		if n, where := s.shopGoroutines(); n-before > stallGoroutines {
			return check.Failed(fmt.Sprintf("%d goroutines more", n-before), fmt.Sprintf("shop-1 committed %s and "+
				"was cut off from Redis at once, and shop-2's Redis stalled for %v: meanwhile the instances had %d "+
				"goroutines waiting in the shop's code, %d more than before the write (at most %d more: the writer's, "+
				"and one each for the instances, with room). A relay "+
				"that starts a goroutine per row on every look, and waits for none, piles them up while Redis "+
				"stalls, each holding a connection of the pool: send the deletes from the relay's own goroutine, "+
				"one at a time, with a deadline. Where they waited: %s", cents(newPrice), stallFor, n, n-before,
				stallGoroutines, where))
		}
		call(&unstall)
	}
	committed := s.Clock.Now()
	if how == ownRelayFirst {
		// A shop-1 whose relay sends nothing lets shop-2 go on after half
		// the bound all the same.
		_ = s.Drive(cut.Load, relayWithin/2)
		call(&unstall)
	}
	within := relayWithin
	switch how {
	case deleteFails:
		within = retryWithin
	case deleteBlackHoled:
		within = detachedWithin + relayWithin
	}
	scene := "with the old price cached"
	switch how {
	case fillerBefore:
		scene = "with shop-2's filler holding the row it read before the commit"
	case deleteFails:
		scene = "with shop-2's first delete failing"
	case redisStalls:
		scene = fmt.Sprintf("with shop-2's Redis stalled for %v after the commit", stallFor)
	case ownRelayFirst:
		scene = "this time after its own delete failed and its relay's first command was answered"
	case deleteBlackHoled:
		scene = "with shop-2's first delete held on its way until the context it was sent on ended, as in a " +
			"network's black hole"
	}
	sent, v := s.awaitOutbox(r, within)
	if !v.Pass {
		return v
	}
	if !sent {
		when := " at once"
		if how == ownRelayFirst {
			when = ""
		}
		msg := fmt.Sprintf("shop-1 committed %s and was cut off from Redis%s, as an instance that dies "+
			"after its commit, %s; %v later the outbox still held the write's invalidation: no relay sent it "+
			"and marked it sent (db.Pending, then the delete, then db.MarkSent)", cents(newPrice), when, scene, within)
		switch how {
		case deleteFails:
			msg += ". A delete that fails is tried again on a later look, with the row left unsent"
		case deleteBlackHoled:
			msg += ". A relay's pass needs a deadline of its own, a few seconds at most, on the clock New is " +
				"given: a delete stalled on the network is then given up and tried again, where one with none " +
				"holds the relay, and every row after it, for as long as the network does"
		case ownRelayFirst:
			msg += ". Shop-1's relay had sent " + s.sentAfter(0, 0) + ": a relay that claims a row for itself " +
				"(so that the others skip it) may die right after its claim, as shop-1 did here; its claim must " +
				"not keep the others off the row for longer than the delete may take"
		}
		return check.Failed("", msg+". Redis held: "+s.Cached())
	}
	delivered := s.Clock.Now().Sub(committed)
	if filler != nil {
		s.reads.Gate(1).Open()
		if err := s.Drive(filler.Done, patience); err != nil {
			return waitVerdict(err, "shop-2's filler, let go after the relay, was")
		}
	}
	held := s.Cached()
	v = s.served("", func(got int) string {
		msg := fmt.Sprintf("shop-1 committed %s and was cut off from Redis at once, %s; the outbox was "+
			"marked sent %v after the commit, yet a visitor after it got %s. ", cents(newPrice), scene,
			delivered.Round(time.Millisecond), cents(got))
		switch how {
		case fillerBefore:
			msg += "The relay's delete must end the lease too, as SetPrice's does, so that a fill that read " +
				"the row before the commit is refused"
		case deleteFails:
			msg += "Mark a row sent only once its delete has succeeded: this one's failed"
		default:
			msg += "A relay marked the row sent though its delete never reached Redis (shop-1's own relay, " +
				"cut off with it, may have): mark a row sent only once its delete has succeeded"
		}
		return msg + ". Redis held: " + held
	})
	if v.Pass && how == deleteFails && failedCommand(s.taps[1]) == "none was sent" {
		return check.Skipped("not staged: shop-2's relay sent the write's delete without a command the " +
			"checker could fail")
	}
	if v.Pass && how == ownRelayFirst && !cut.Load() {
		// The others' scenes stand; this one did not happen, and the
		// verdict says so rather than count it.
		return check.Passed("not staged: shop-1's relay sent Redis nothing after its commit, so no instance " +
			"died right after its relay's first command")
	}
	return v
}

// shopGoroutines counts the goroutines with a frame in the shop's code,
// and says where they are, for a message.
func (s *scene) shopGoroutines() (int, string) {
	n := 0
	for _, g := range stack.All() {
		if _, ok := g.In(s.H.Dir()); ok {
			n++
		}
	}
	return n, strings.Join(s.Places(), "; ")
}

// call calls the function f holds, if any.
func call(f *atomic.Pointer[func()]) {
	if fn := f.Load(); fn != nil {
		(*fn)()
	}
}

// laterWriterCutOff is Outbox's last scene: two writes of the book, the
// later one's writer cut off at its commit while the earlier one is still
// finishing. Shop-1's write commits newPrice, and once Redis has answered
// its next command (its delete) it is held; a visitor on shop-2 misses,
// takes a lease and reads the row (newPrice), held there; shop-3's write
// commits newer and is cut off at once. Then shop-1's write finishes, and
// shop-2's filler stores what it read. Only the relays can now bring the
// later write's delete: a visitor after them must get newer. It catches a
// write that, its own delete sent, marks its book's other outbox rows
// sent too: a delete sent before a commit does not stand for it.
func laterWriterCutOff(h *harness.H, newShop NewShop) check.Verdict {
	s, err := newScene(h, newShop, 3, fleet.HoldCalls(1), fleet.HoldCalls())
	if err != nil {
		return fleet.Unreachable(err)
	}
	defer s.Close()
	r, v := s.startRelays()
	if !v.Pass {
		return v
	}
	defer r.stop()
	hold := harness.NewGate()
	defer hold.Open()
	var commits atomic.Int32
	var held atomic.Bool
	var resume atomic.Pointer[func()]
	defer call(&resume)
	s.commits.Then = func(context.Context, string) error {
		switch commits.Add(1) {
		case 1:
			s.taps[0].Note(func(c fleet.Command) {
				if len(c.Keys) == 0 || c.NoScript || !held.CompareAndSwap(false, true) {
					return
				}
				_ = hold.Wait(h.Context()) // shop-1's write, right after its delete
			})
		case 2:
			r := s.taps[2].Pause() // shop-3 is cut off at its commit
			resume.Store(&r)
		}
		return nil
	}
	first := s.Write(0, newPrice)
	if err := s.Drive(func() bool { return held.Load() || first.Done() }, patience); err != nil {
		return waitVerdict(err, "shop-1's write was")
	}
	if !held.Load() {
		return check.Skipped("not staged: shop-1's write sent Redis nothing after its commit")
	}
	filler := s.Read(1)
	if err := s.Drive(func() bool { return s.reads.Calls() > 0 || filler.Done() }, patience); err != nil {
		return waitVerdict(err, "shop-2's visitor, after shop-1's delete, was")
	}
	if s.reads.Calls() == 0 {
		return check.Skipped("not staged: shop-2's visitor, after shop-1's delete, did not read the row")
	}
	s.Write(2, newer)
	if err := s.Drive(func() bool { return s.Truth().Price == newer }, patience); err != nil {
		return waitVerdict(err, "shop-3's write was")
	}
	hold.Open()
	if err := s.Drive(first.Done, patience); err != nil {
		return waitVerdict(err, "shop-1's write, let go after shop-3's commit, was")
	}
	s.reads.Gate(1).Open()
	if err := s.Drive(filler.Done, patience); err != nil {
		return waitVerdict(err, "shop-2's filler was")
	}
	sent, v := s.awaitOutbox(r, relayWithin)
	if !v.Pass {
		return v
	}
	if !sent {
		return check.Failed("", fmt.Sprintf("shop-3 committed %s and was cut off from Redis at once; %v later the "+
			"outbox still held an invalidation: no relay sent it and marked it sent. Redis held: %s",
			cents(newer), relayWithin, s.Cached()))
	}
	held2 := s.Cached()
	return s.served("", func(got int) string {
		return fmt.Sprintf("shop-1's write committed %s and sent its delete; then shop-2's visitor missed, took a "+
			"lease and read the row (%s); then shop-3's write committed %s and was cut off from Redis at once, as "+
			"an instance that dies after its commit; then shop-1's write finished, and shop-2's filler stored what it "+
			"had read. With the outbox empty, a visitor got %s. Nobody sent a delete after shop-3's commit, yet its "+
			"outbox row was marked sent: mark a row sent only after a delete sent after that row's commit (the relay "+
			"that read it from the outbox, and sent its delete), never because a delete of the same book went "+
			"earlier. Redis held: %s", cents(newPrice), cents(newPrice), cents(newer), cents(got), held2)
	})
}

const (
	// troubleFor is how long shop-2's Redis refuses every write in
	// relayRecovers: long enough for a relay that doubles its wait from
	// relayEvery to reach its longest, 2 s, after five failed passes.
	troubleFor = 8 * time.Second
	// backWithin is how long after Redis is well again the relay may take
	// to send the row it kept failing: its longest wait, a second or so by
	// the contract, with room.
	backWithin = 2 * retryWithin
	// quietFor is how long relayRecovers then leaves the relays with
	// nothing to send, and recoveredApart how far apart its later commits
	// come.
	quietFor       = 3 * time.Second
	recoveredApart = 700 * time.Millisecond
)

// relayRecovers is the last scene of Outbox: a relay after Redis trouble.
// Shop-1 is cut off from Redis at each of its commits, as an instance that
// dies after them, so that only shop-2's relay can send the deletes. Both
// the book and another are cached first; shop-1 commits the book's price,
// and then another's is committed straight in the database, as by a
// writer that died. For troubleFor after that, shop-2's Redis refuses
// every write, and its relay fails pass after pass, trying again at most
// retryWithin apart (a relay whose wait grows without a cap, or to 5 s,
// waits longer); then Redis is well again, both rows must be sent within
// backWithin, and, shop-1 still cut off, visitors of shop-2 must get both
// new prices: a relay that marks a row sent though its delete never
// succeeded (one that gives a row up after a few failures), or that sends
// only the newest row's delete, leaves an old price in Redis. After
// quietFor with nothing to send,
// shop-1 commits three more writes, recoveredApart after one another, each
// to be sent within relayWithin. A relay that never sets its wait back
// after a good pass looks only every 2 s for the rest of its life: one of
// three commits 0.7 s apart comes less than 0.7 s after one of its looks,
// and waits more than 1.3 s for the next (c10-relay-backoff-never-reset).
func relayRecovers(h *harness.H, newShop NewShop) check.Verdict {
	s, err := newScene(h, newShop, 2, fleet.HoldCalls(), fleet.HoldCalls())
	if err != nil {
		return fleet.Unreachable(err)
	}
	defer s.Close()
	r, v := s.startRelays()
	if !v.Pass {
		return v
	}
	defer r.stop()
	var trouble atomic.Bool
	trouble.Store(true)
	var refused atomic.Int64
	var mu sync.Mutex
	var tries []time.Time // when shop-2 sent a write Redis refused
	s.taps[1].Fail(func(c fleet.Command) bool {
		if trouble.Load() && !fleet.ReadOnly(c.Name) {
			refused.Add(1)
			mu.Lock()
			tries = append(tries, s.Clock.Now())
			mu.Unlock()
			return true
		}
		return false
	}, errRedis, -1)
	// Both books are cached by shop-1, whose writes Redis takes.
	other := otherBook()
	for _, b := range []string{book, other} {
		v := s.ReadBook(0, b)
		if err := s.Drive(v.Done, patience); err != nil {
			return waitVerdict(err, "shop-1's visitor of "+b+" was")
		}
	}
	var resume atomic.Pointer[func()]
	defer call(&resume)
	s.commits.Then = func(context.Context, string) error {
		if resume.Load() == nil {
			r := s.taps[0].Pause() // nothing shop-1 sends from now on reaches Redis
			resume.Store(&r)
		}
		return nil
	}
	oldOther, _ := s.db.Peek(other)
	otherPrice := oldOther.Price + 100
	// served has a visitor of shop-2 ask for each book while shop-1 is
	// still cut off, so that only shop-2's relay can have sent the
	// deletes, and fails when one is served an old price.
	served := func() check.Verdict {
		for _, b := range []struct {
			title string
			price int
		}{{book, newPrice}, {other, otherPrice}} {
			v := s.ReadBook(1, b.title)
			if err := s.Drive(v.Done, patience); err != nil {
				return waitVerdict(err, "shop-2's visitor of "+b.title+" was")
			}
			o := v.Outcomes()[0]
			if o.Err == nil && o.Panic == "" && o.Value == b.price {
				continue
			}
			got := fmt.Sprintf("the error %v", o.Err)
			if o.Panic != "" {
				got = "a panic: " + o.Panic
			} else if o.Err == nil {
				got = cents(o.Value)
			}
			return check.Failed("", fmt.Sprintf("two writes were committed, %s of %s and %s of %s, each by a "+
				"writer cut off from Redis at once, and shop-2's Redis refused every write for %v; once it was "+
				"well again the outbox was emptied, yet a visitor of %s on shop-2 then got %s: the relay marked "+
				"a row sent whose delete never reached Redis. Mark a row sent only once its own delete has "+
				"succeeded, keep trying it while Redis fails (never give a row up), and send every row's delete, "+
				"not only the newest. Redis held: %s", cents(otherPrice), other, cents(newPrice), book,
				troubleFor, b.title, got, s.Cached()))
		}
		return check.Passed("")
	}
	// write has shop-1 commit price, cut off at its commit, and waits
	// for the relays to send it within bound; then shop-1 is let through
	// again and its write returns.
	write := func(price int, bound time.Duration, when string) check.Verdict {
		w := s.Write(0, price)
		if err := s.Drive(func() bool { return s.Truth().Price == price }, patience); err != nil {
			return waitVerdict(err, "shop-1's write was")
		}
		if price == newPrice {
			// The other book's price is committed straight in the
			// database, after shop-1's (which takes what it needs of
			// Redis before its commit), as by another writer that died.
			if _, err := s.db.SetPrice(s.H.Context(), other, otherPrice); err != nil {
				return check.Failed("", "the checker's own write of "+other+" failed: "+err.Error())
			}
			firstCommit := s.Clock.Now()
			if err := s.Elapse(troubleFor); err != nil {
				return stuckVerdict(err)
			}
			if refused.Load() == 0 {
				return check.Skipped("not staged: shop-2 sent Redis no write while it refused them, so its relay " +
					"never failed a pass")
			}
			trouble.Store(false)
			mu.Lock()
			gap, at := longestGap(firstCommit, tries)
			mu.Unlock()
			if gap > retryWithin {
				return check.Failed("", fmt.Sprintf("while shop-2's Redis refused every write for %v, its relay "+
					"sent nothing for %v (from %v after the first commit): a relay backs off from a failing Redis, but "+
					"tries a failed delete again within a second or so; cap its wait (at most %v), or a long "+
					"outage leaves it asleep for minutes once Redis is back", troubleFor, gap.Round(time.Millisecond), at.Round(time.Millisecond), retryWithin))
			}
		}
		committed := s.Clock.Now()
		sent, v := s.awaitOutbox(r, bound)
		if !v.Pass {
			return v
		}
		if !sent {
			late := fmt.Sprintf("%v later the outbox still held the write's invalidation", bound)
			if len(s.db.Unsent()) == 0 {
				late = fmt.Sprintf("the outbox was emptied only %v after it", s.Clock.Now().Sub(committed))
			}
			return check.Failed("", fmt.Sprintf("shop-1 committed %s and was cut off from Redis at once, as an "+
				"instance that dies after its commit, %s; %s. A relay that backs off while Redis fails must come back to its look every 100 ms "+
				"or so once a pass goes well (set the wait back after a good pass): after one bad spell it "+
				"otherwise stays slow for the life of the process, and no write whose writer dies reaches Redis "+
				"within a second. Redis held: %s", cents(price), when, late, s.Cached()))
		}
		if price == newPrice {
			if v := served(); !v.Pass {
				return v
			}
		}
		call(&resume)
		resume.Store(nil)
		if err := s.Drive(w.Done, patience); err != nil {
			return waitVerdict(err, "shop-1's write, let through again, was")
		}
		return check.Passed("")
	}
	if v := write(newPrice, backWithin, fmt.Sprintf("and shop-2's Redis refused every write for %v, then was well "+
		"again", troubleFor)); !v.Pass {
		return v
	}
	if err := s.Elapse(quietFor); err != nil {
		return stuckVerdict(err)
	}
	next := s.Clock.Now()
	for i, price := range []int{newer, newPrice, newer} {
		if wait := next.Sub(s.Clock.Now()); wait > 0 {
			if err := s.Elapse(wait); err != nil {
				return stuckVerdict(err)
			}
		}
		next = s.Clock.Now().Add(recoveredApart)
		when := fmt.Sprintf("once shop-2's Redis, after refusing every write for %v, had been well again for "+
			"%v or more (the %s of three such commits, %v apart)", troubleFor, quietFor,
			[]string{"first", "second", "third"}[i], recoveredApart)
		if v := write(price, relayWithin, when); !v.Pass {
			return v
		}
	}
	return check.Passed("")
}

// longestGap returns the longest time between start and the first of
// tries, or between two tries in a row, and how long after start it began.
func longestGap(start time.Time, tries []time.Time) (gap, at time.Duration) {
	last := start
	for _, t := range tries {
		if d := t.Sub(last); d > gap {
			gap, at = d, last.Sub(start)
		}
		last = t
	}
	return gap, at
}
