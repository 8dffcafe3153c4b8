// Package point puts the explorer's hand between the student's own
// statements.
//
// A bug that sits between two adjacent statements (a map loaded, cloned
// and stored back with no lock; a flag read and then set; a lock dropped
// one line before the list is stored) has no wait in its gap, so no scene
// can open the gap by timing: only the scheduler can, now and then. The
// grader builds the student's code itself, so it builds a copy of it
// (Rewrite) with a call to Here before each statement, on the statement's
// own line, so that every panic, race report and stuck visitor still
// names the student's file and line. The student's files are never
// changed.
//
// Here does nothing until a check starts a Schedule. Under one, the n-th
// point reached in the process may hold the goroutine that reached it
// until the process is otherwise at rest (every other goroutine parked),
// when the driver of the scene's clock lets it go (Release), before the
// clock moves. A hold only ever delays a goroutine, and a goroutine may
// always be delayed by Go's own scheduler for as long as the others take
// to block: every run under a Schedule is a run the program could have
// had without one, so a correct answer cannot fail by it.
//
// The hold is invisible to the race detector (see race.go): the lock and
// channel it uses are not synchronisation of the student's, and a data
// race between two visitors stays a data race whichever of them was held.
//
// The package keeps the running Schedule in a variable of its own, the
// one piece of global state in the checker: the call put in the student's
// code takes no arguments, so the schedule must be reachable without
// them. A worker runs one check per process, and one scene at a time.
package point

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"stampede/checker/stack"
)

// current is the Schedule in force, nil when none is.
var current atomic.Pointer[Schedule]

// Here is the call the grader's copy of the student's code makes before
// each statement. Without a Schedule it returns at once.
func Here() {
	if s := current.Load(); s != nil {
		s.here()
	}
}

// Spawn is Here before a go statement. Under a ParkSpawners schedule it
// also marks the calling goroutine, if the checker named it (a visitor),
// which then parks at its next point, once it has started the goroutine.
func Spawn() {
	if s := current.Load(); s != nil {
		s.here()
		if s.unpark != nil {
			raceDisable()
			if id := GoroutineID(); s.named(id) {
				s.spawners.Store(id, true)
			}
			raceEnable()
		}
	}
}

// A Schedule decides what a point does. Count's only counts the points
// reached. PCT's runs the scene's goroutines one at a time, by priority,
// as the randomised scheduler of Burckhardt et al. does ("A randomized
// scheduler with probabilistic guarantees of finding bugs", ASPLOS 2010):
//
//   - A goroutine that reaches a point is held there, unless it is the
//     runner: the goroutine let go last, which runs on until it blocks
//     (on a lock, a channel, the scene's clock) or ends. When the process
//     is at rest with nobody held, there is no runner: goroutines woken
//     together by the clock are all held at their first point.
//   - Whenever the process is at rest, the driver lets go the held
//     goroutine of highest priority, which becomes the runner.
//     Priorities are drawn from the seed as goroutines first reach a
//     point. Several that arrive together are taken in an order that
//     does not depend on the machine: goroutines the checker named
//     (Rank: its visitors) by name, then the others by the line they
//     reached, then by id.
//   - A step is a point the runner reaches once the schedule has seen
//     another goroutine: a moment another schedule could have switched.
//     Whether it counts is decided at rest, when the runner is let go,
//     not by whether another goroutine has reached a point yet (which
//     is a race the machine decides), so that a seed's change points
//     fall on the same statements in every run. At each of a few chosen
//     steps (the change points) the runner is held and demoted below
//     every other goroutine, so that the others run first.
//
// With d-1 change points drawn among k steps, a bug that needs d
// orderings of n goroutines is found with probability at least
// 1/(n·k^(d-1)). A goroutine the runner wakes waits at its first point
// until the runner blocks, where PCT would switch to it at once if its
// priority were higher: a schedule of the same kind, a little less
// eager to preempt.
type Schedule struct {
	every bool // hold goroutines (PCT)
	// unpark, set by ParkSpawners, is closed by Unpark: a goroutine that
	// started another (Spawn) waits on it at its next point. spawners
	// holds those marked and not yet parked; parked counts those waiting.
	unpark   chan struct{}
	unparked sync.Once
	spawners sync.Map // goroutine id -> true
	parked   atomic.Int64
	parkAt   []int64        // set by ParkAt: the points, counted from 1, whose goroutines park
	parkedPC atomic.Uintptr // where it parked
	order    int            // 0: priorities drawn; 1: first come highest; -1: first come lowest
	queue    bool           // let go the goroutine held longest, whatever its priority (Turns)
	driver   int            // the goroutine that started the schedule, never held
	changes  []int
	arrive   chan *waiter // a held goroutine says so here
	stopped  atomic.Bool  // out of force: a goroutine arriving now is not held

	// Shared with the held goroutines, atomics only (see here).
	hits     atomic.Int64
	steps    atomic.Int64 // points the runner reached while counting was set
	counting atomic.Bool  // the runner was let go with another goroutine seen
	held     atomic.Int64 // goroutines held now
	loose    atomic.Bool  // hold nobody for now (Loosen)
	runner   atomic.Int64 // the goroutine let go last
	streak   atomic.Int64 // steps the runner has taken while others were held
	demoted  atomic.Int64 // change points and yields made
	names    [maxNames]named
	nnames   atomic.Int64

	// The driver's side, which the held goroutines never touch.
	mu      sync.Mutex
	rng     *rand.Rand
	onHold  func(Hold)
	prio    map[int]float64 // goroutine id -> priority
	waiting []*waiter       // held goroutines, in the order they were seen
	// The stretch of steps the runner has taken since it was let go:
	// from is the step count then, and others whether anyone else was
	// held then. contended are the steps of the stretches in which a
	// switch could let another goroutine run (see Contended).
	from      int
	others    bool
	contended []int
	log       []Hold
	late      int
	done      chan struct{} // ends the safety net (see lateAfter)
}

// maxNames bounds the goroutines one schedule keeps names for; past it,
// goroutines are ordered as unnamed ones.
const maxNames = 1024

// named is a goroutine the checker named: written by that goroutine with
// atomics alone, read by the driver (see Rank).
type named struct{ g, key atomic.Int64 }

// Rank gives the calling goroutine a key under the schedule in force, so
// that goroutines that first reach a point together are ordered by key,
// the same in every run, rather than by ids the runtime hands out per
// processor. The checker names its visitors (harness.Visit) before they
// call the shop.
func Rank(key int) {
	s := current.Load()
	if s == nil || !s.every && s.unpark == nil {
		return
	}
	raceDisable()
	defer raceEnable()
	if i := s.nnames.Add(1) - 1; i < maxNames {
		s.names[i].g.Store(int64(GoroutineID()))
		s.names[i].key.Store(int64(key))
	}
}

// named reports whether goroutine g was named (Rank).
func (s *Schedule) named(g int) bool {
	_, ok := s.keyOf(g)
	return ok
}

// keyOf returns the key goroutine g was named with.
func (s *Schedule) keyOf(g int) (int, bool) {
	n := min(s.nnames.Load(), maxNames)
	for i := range n {
		if s.names[i].g.Load() == int64(g) {
			return int(s.names[i].key.Load()), true
		}
	}
	return 0, false
}

// Hold is one release of a held goroutine while others were held too.
type Hold struct {
	Goroutine int    // the goroutine let go
	Where     string // where it was held: the student's file and line, such as "shop.go:91"
	Others    []Hold // the goroutines still held, and where
	Demoted   int    // the goroutine demoted at a change point just before (0: none)
}

func (h Hold) String() string {
	return h.Describe(func(g int) string { return fmt.Sprintf("goroutine %d", g) })
}

// Describe tells the release as a line of a story, naming each goroutine
// as name says ("visitor 2"): who went on from where, who still waits
// where, and who a change point held just before.
func (h Hold) Describe(name func(g int) string) string {
	s := fmt.Sprintf("%s goes on from %s", name(h.Goroutine), h.Where)
	for i, o := range h.Others {
		if i == 0 {
			s += " while "
		} else {
			s += ", "
		}
		s += fmt.Sprintf("%s waits at %s", name(o.Goroutine), o.Where)
	}
	if h.Demoted != 0 {
		s = fmt.Sprintf("(a switch: %s is held where it was) %s", name(h.Demoted), s)
	}
	return s
}

// A waiter is a goroutine held at a point. The held goroutine writes it
// and the driver reads it with no synchronisation the race detector sees
// (see here), so what they share is atomic.
type waiter struct {
	goroutine atomic.Int64
	pc        atomic.Uintptr
	demote    atomic.Bool
	release   atomic.Value // chan struct{}

	g     int       // goroutine, read by the driver
	where string    // the line of pc
	since time.Time // when the driver first saw it
}

// Count returns a schedule that holds nothing and counts the points the
// process reaches.
func Count() *Schedule { return &Schedule{} }

// PCT returns a schedule that runs goroutines one at a time by
// priorities drawn from seed, demoting the runner at each of the steps
// changes names (counted from 1).
func PCT(seed uint64, changes ...int) *Schedule {
	c := slices.Clone(changes)
	slices.Sort(c)
	return &Schedule{
		every:   true,
		arrive:  make(chan *waiter, 1024),
		rng:     rand.New(rand.NewPCG(seed, 0x9c7)),
		changes: slices.Compact(c),
		prio:    map[int]float64{},
	}
}

// Ordered returns a schedule like PCT's whose priorities are not drawn
// but follow the order in which goroutines first reach a point (for
// goroutines that arrive together, as collect orders them): the first
// highest, or with reverse the first lowest. With one change point at
// each contended step in turn, and both orders, it plays every schedule
// of two goroutines with one switch (the explorer's fixed scenes).
func Ordered(reverse bool, changes ...int) *Schedule {
	s := PCT(0, changes...)
	s.order = 1
	if reverse {
		s.order = -1
	}
	return s
}

// LockstepSteps is how many steps a Lockstep schedule switches at; past
// them the runner runs on as under Ordered.
const LockstepSteps = 4096

// Lockstep returns an Ordered schedule with a change point at every step
// (up to LockstepSteps), so that the goroutines take turns one statement
// each: two visitors of the same code then both look before either acts,
// which no single switch makes happen (a count added to and read back in
// two steps, both adding before either reads).
func Lockstep(reverse bool) *Schedule { return LockstepAfter(reverse, 0) }

// LockstepAfter is Lockstep with the first goroutine (as Ordered orders
// them) taking lead more steps alone before the turns begin (under
// Lockstep it takes one, then the other one, and so on): two goroutines
// whose critical steps lie at different depths of their code meet there
// only when one has a head start of about the difference.
func LockstepAfter(reverse bool, lead int) *Schedule {
	every := make([]int, LockstepSteps)
	for i := range every {
		every[i] = lead + i + 1
	}
	return Ordered(reverse, every...)
}

// Turns returns a schedule that runs goroutines one at a time, in turns:
// at rest, the goroutine held longest goes on (goroutines held together
// in the order collect gives them: the checker's visitors by number).
// Unlike PCT's priorities, turns starve nobody: a goroutine that wakes
// again and again on a timer of its own goes to the back each time
// (harness.OneAtATime).
func Turns() *Schedule {
	s := Ordered(false)
	s.queue = true
	return s
}

// ParkSpawners returns a schedule that holds nobody but a goroutine the
// checker named (a visitor, Rank) that has just started another: at its
// first point after the go statement it parks, whatever the rest of the
// process does, until Unpark (or Stop). Goroutines of the shop's own that
// start others are not held.
// The goroutine it started runs meanwhile to its end, clock sleeps and
// Redis round trips included, as it may when the runtime runs it first
// and the spawner is preempted: a flag the spawner sets after its go
// statement, and the goroutine clears when done, stays set.
func ParkSpawners() *Schedule { return &Schedule{unpark: make(chan struct{})} }

// ParkAt returns a schedule that holds nobody but the goroutines that
// reach the n-th points from its start (counted over the whole process,
// from 1): each parks there until Unpark (or Stop), whatever the rest of
// the process does. (Two visitors of the same path, the second coming
// once the first is parked at its n-th point, park at their n-th points
// with ParkAt(n, 2*n).) A scene in which one visitor's goroutines are the only
// ones reaching points (the others wait at gates or on the clock) sweeps
// n over that visitor's path, from 1 to the points a Count schedule saw
// it reach, to stop it between any two of its statements while the scene
// does something else: the switch a check needs where two goroutines'
// statements must interleave just so (a "none free" seen, then a slot
// given back, then the wait for one: c08-semaphore-lost-wakeup).
func ParkAt(n ...int) *Schedule {
	s := &Schedule{unpark: make(chan struct{})}
	for _, k := range n {
		s.parkAt = append(s.parkAt, int64(k))
	}
	return s
}

// ParkedWhere returns where the goroutine a ParkAt schedule parked last is
// held, the student's file and line ("shop.go:181"), or "" while none is.
func (s *Schedule) ParkedWhere() string {
	pc := s.parkedPC.Load()
	if pc == 0 {
		return ""
	}
	return where(pc)
}

// Parked returns how many goroutines have parked under a ParkSpawners
// or ParkAt schedule.
func (s *Schedule) Parked() int { return int(s.parked.Load()) }

// Unpark lets every parked goroutine go on, and parks none from then on.
func (s *Schedule) Unpark() {
	s.unparked.Do(func() { close(s.unpark) })
}

// Watch has fn told of every release made while other goroutines were
// held, on the driver's goroutine, as it happens (a story logs them).
func (s *Schedule) Watch(fn func(Hold)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.onHold = fn
}

// Start puts s in force, replacing any schedule in force. The calling
// goroutine is the scene's driver: it is never held, since it is the one
// that lets the others go (a shop's New, called by the driver, has points
// too).
func Start(s *Schedule) {
	s.driver = GoroutineID()
	s.stopped.Store(false)
	if s.every {
		s.done = make(chan struct{})
		go s.safetyNet()
	}
	if old := current.Swap(s); old != nil {
		old.stop()
	}
}

// Stop takes the schedule in force out of force and lets every goroutine
// it holds go on.
func Stop() {
	if s := current.Swap(nil); s != nil {
		s.stop()
	}
}

// Running returns the schedule in force, nil when none is.
func Running() *Schedule { return current.Load() }

func (s *Schedule) stop() {
	if s.unpark != nil {
		s.Unpark()
	}
	if !s.every {
		return
	}
	s.stopped.Store(true)
	close(s.done)
	s.letAll()
}

// letAll lets every goroutine held now go on.
func (s *Schedule) letAll() {
	s.mu.Lock()
	s.collect()
	s.endStretch()
	waiting := s.waiting
	s.waiting = nil
	s.mu.Unlock()
	for _, w := range waiting {
		s.let(w)
	}
}

// Loosen lets every goroutine the schedule in force holds go on and holds
// none until the returned function is called; then goroutines are held
// again from their next point, with no runner, as at the start. A check
// calls it while real time passes on purpose (a query held for the
// story's time, so that a visitor's timer of its own fires): a loop that
// counts its tries on a timer gets them at the machine's pace there,
// where a hold at each try would make it a function of how fast the
// driver lets goroutines go. Without a schedule in force it does nothing.
func Loosen() (tighten func()) {
	s := current.Load()
	if s == nil || !s.every {
		return func() {}
	}
	s.loose.Store(true)
	s.letAll()
	// A goroutine that passed its point's look just before the flag was
	// set is held all the same; the driver's next Release lets it go.
	return func() {
		s.runner.Store(0)
		s.loose.Store(false)
	}
}

// Holding reports whether the schedule in force holds a goroutine at a
// point now, for a driver that must let it go before it looks for rest.
func Holding() bool {
	s := current.Load()
	return s != nil && s.held.Load() > 0
}

// Release lets one goroutine held by the schedule in force go on, and
// reports whether one was held. A driver of virtual time calls it
// whenever the process is at rest, before it moves the clock
// (harness.H.Quiet does).
func Release() bool {
	if s := current.Load(); s != nil {
		return s.Release()
	}
	return false
}

// Release lets the held goroutine of highest priority go on, as the
// runner, and reports whether one was held.
func (s *Schedule) Release() bool {
	if !s.every {
		return false
	}
	s.mu.Lock()
	demoted := s.collect()
	s.endStretch()
	if len(s.waiting) == 0 {
		// At rest with nothing held: the runner has blocked, and whoever
		// wakes next (when the clock moves) waits at its first point, so
		// that goroutines woken together are ordered by priority too.
		s.runner.Store(0)
		s.mu.Unlock()
		return false
	}
	best := 0
	for i, w := range s.waiting {
		if !s.queue && s.prio[w.g] > s.prio[s.waiting[best].g] {
			best = i
		}
	}
	w := s.waiting[best]
	s.waiting = slices.Delete(s.waiting, best, best+1)
	s.counting.Store(len(s.prio) > 1)
	s.from, s.others = int(s.steps.Load()), len(s.waiting) > 0
	var h *Hold
	// Turns keeps no log unless someone watches: a burst may make
	// thousands of releases, each with every goroutine still held.
	if len(s.waiting) > 0 && (!s.queue || s.onHold != nil) {
		h = &Hold{Goroutine: w.g, Where: w.where, Demoted: demoted}
		for _, o := range s.waiting {
			h.Others = append(h.Others, Hold{Goroutine: o.g, Where: o.where})
		}
		if !s.queue {
			s.log = append(s.log, *h)
		}
	}
	onHold := s.onHold
	s.mu.Unlock()
	if h != nil && onHold != nil {
		onHold(*h)
	}
	s.let(w)
	return true
}

// endStretch closes the runner's stretch of steps at rest: its steps are
// contended when another goroutine was held as it began or is held now
// (other than the runner itself, held at a change point). Both are read
// at rest, so they are the same in every run of a seed; a stretch with
// nobody held at either end had nobody a switch could let run. The
// caller holds mu and has collected.
func (s *Schedule) endStretch() {
	to := int(s.steps.Load())
	runner := int(s.runner.Load())
	others := s.others || slices.ContainsFunc(s.waiting, func(w *waiter) bool { return w.g != runner })
	if others {
		for step := s.from + 1; step <= to; step++ {
			s.contended = append(s.contended, step)
		}
	}
	s.from, s.others = to, false
}

// Contended returns the steps at which a change point can let another
// goroutine run: those of the stretches that began or ended with another
// goroutine held. A change point at any other step holds the runner only
// until the next rest, when nobody else is there to go first: the play
// is the one with no change point.
func (s *Schedule) Contended() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.contended)
}

// collect takes in the goroutines held since the last look: a goroutine
// seen for the first time gets a priority (for goroutines that arrived
// together, in the order of arrivals: named ones by key, then by line,
// then by id), and one held at a change point is demoted below every
// other. It returns the goroutine demoted, or 0. The caller holds mu.
func (s *Schedule) collect() (demoted int) {
	var fresh []*waiter
	for more := true; more; {
		select {
		case w := <-s.arrive:
			w.g = int(w.goroutine.Load())
			w.where = where(w.pc.Load())
			w.since = time.Now()
			fresh = append(fresh, w)
		default:
			more = false
		}
	}
	slices.SortFunc(fresh, s.arrivals)
	for _, w := range fresh {
		if _, ok := s.prio[w.g]; !ok {
			switch n := float64(len(s.prio)); s.order {
			case 0:
				s.prio[w.g] = 1 + s.rng.Float64()
			case 1:
				s.prio[w.g] = 1 + 1/(n+1)
			default:
				s.prio[w.g] = 2 - 1/(n+1)
			}
		}
		if w.demote.Load() {
			// Below every priority drawn (all at least 1), and below the
			// goroutines demoted before it.
			s.prio[w.g] = 1 - float64(s.demoted.Load())/float64(len(s.changes)+1)
			demoted = w.g
		}
	}
	s.waiting = append(s.waiting, fresh...)
	return demoted
}

// arrivals orders goroutines that arrived together: named ones first,
// by key; then by the line they reached; then by id.
func (s *Schedule) arrivals(a, b *waiter) int {
	ka, na := s.keyOf(a.g)
	kb, nb := s.keyOf(b.g)
	switch {
	case na && nb:
		return cmp.Compare(ka, kb)
	case na != nb:
		if na {
			return -1
		}
		return 1
	}
	if c := strings.Compare(a.where, b.where); c != 0 {
		return c
	}
	return cmp.Compare(a.g, b.g)
}

// let lets a held goroutine go on, as the runner. The close is hidden
// from the race detector: seen, it would order everything the driver has
// seen (other visitors' work, by way of the scene's own locks) before the
// rest of the held goroutine's statements, and hide their races.
func (s *Schedule) let(w *waiter) {
	s.runner.Store(int64(w.g))
	s.streak.Store(0)
	s.held.Add(-1)
	raceDisable()
	close(w.release.Load().(chan struct{}))
	raceEnable()
}

// Hits returns how many points the process has reached under s.
func (s *Schedule) Hits() int { return int(s.hits.Load()) }

// Steps returns how many points the runner reached once another
// goroutine had been seen: the k of the change points.
func (s *Schedule) Steps() int { return int(s.steps.Load()) }

// Held returns the releases made while other goroutines were held, in
// order.
func (s *Schedule) Held() []Hold {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.log)
}

// Late returns how many holds no driver released, which the safety net
// ended after lateAfter: a check that starts a schedule but drives with
// something other than H.Quiet. The explorer's tests require none.
func (s *Schedule) Late() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.late
}

// maxStreak is how many steps the runner may take while other
// goroutines are held before it yields (see here). A step of a shop that
// does not spin is a statement between two waits; none of the lab's right
// answers takes more than a few dozen in a row.
const maxStreak = 1000

// lateAfter is how long a hold lasts when no driver releases it: a
// safety net, so that a check that waits without H.Quiet is slower, not
// stuck. It decides no verdict, but a hold it ends is a schedule the
// seed did not choose, so it must not fire while a driver is merely slow:
// two seconds, far beyond any wait for rest on a loaded machine, and
// well inside the hang bound.
const lateAfter = 2 * time.Second

// AtPoint reports whether g is held at a schedule point: a goroutine at
// work, paused by the checker between two of its statements, whatever
// its state says (a receive from the channel that lets it go).
func AtPoint(g stack.Goroutine) bool {
	return slices.ContainsFunc(g.Frames, func(f stack.Frame) bool { return f.Func == hereFunc })
}

// hereFunc is here's name in a stack.
const hereFunc = "stampede/checker/point.(*Schedule).here"

// SafetyNet reports whether g is a schedule's safety net: the checker's
// own goroutine, waiting on a ticker, which a look for a deadlock must
// leave out.
func SafetyNet(g stack.Goroutine) bool {
	return slices.ContainsFunc(g.Frames, func(f stack.Frame) bool { return f.Func == safetyNetFunc })
}

// safetyNetFunc is safetyNet's name in a stack.
const safetyNetFunc = "stampede/checker/point.(*Schedule).safetyNet"

// safetyNet lets go, oldest first, the goroutines held longer than
// lateAfter, until the schedule stops.
func (s *Schedule) safetyNet() {
	t := time.NewTicker(lateAfter / 5)
	defer t.Stop()
	for {
		select {
		case <-s.done:
			return
		case <-t.C:
		}
		s.mu.Lock()
		s.collect()
		var late []*waiter
		for len(s.waiting) > 0 && time.Since(s.waiting[0].since) > lateAfter {
			late = append(late, s.waiting[0])
			s.waiting = s.waiting[1:]
			s.late++
		}
		s.mu.Unlock()
		for _, w := range late {
			s.let(w)
		}
	}
}

// here is a point reached under s. Everything the goroutine does here is
// hidden from the race detector's synchronisation, and touches only
// atomics, what it made itself, and what was set before the schedule
// started: a lock or a channel it shared with the driver would order it
// after every goroutine the driver had heard from, and a plain field the
// driver read would be reported as a race of the checker's.
func (s *Schedule) here() {
	raceDisable()
	defer raceEnable()
	hit := s.hits.Add(1)
	if s.unpark != nil {
		if slices.Contains(s.parkAt, hit) {
			var pc [1]uintptr
			runtime.Callers(3, pc[:]) // runtime.Callers, here, Here: the statement's line is next
			s.parkedPC.Store(pc[0])
			s.parked.Add(1)
			<-s.unpark
		} else if _, ok := s.spawners.LoadAndDelete(GoroutineID()); ok {
			s.parked.Add(1)
			<-s.unpark
		}
	}
	if !s.every || s.loose.Load() {
		return
	}
	id := GoroutineID()
	if id == s.driver {
		return
	}
	w := new(waiter)
	if int64(id) == s.runner.Load() {
		if !s.counting.Load() {
			return // no other goroutine seen yet: not a step
		}
		step := s.steps.Add(1)
		_, change := slices.BinarySearch(s.changes, int(step))
		// A runner that takes maxStreak steps while others wait is
		// likely spinning on something a held goroutine would give it
		// (a flag polled with runtime.Gosched): it yields, demoted, as
		// Go's scheduler would preempt it, so that a correct program
		// that spins still ends.
		if !change && (s.held.Load() == 0 || s.streak.Add(1) < maxStreak) {
			return
		}
		s.demoted.Add(1)
		w.demote.Store(true)
	}
	w.goroutine.Store(int64(id))
	release := make(chan struct{})
	w.release.Store(release)
	var pc [1]uintptr
	runtime.Callers(3, pc[:]) // runtime.Callers, here, Here: the statement's line is next
	w.pc.Store(pc[0])
	s.held.Add(1)
	s.arrive <- w
	if s.stopped.Load() {
		// The schedule stopped as this goroutine arrived: Stop may have
		// let every held goroutine go before this one said so, and
		// nobody would let it go. (Seen false, stop's letAll comes after
		// the arrival and lets it go.)
		return
	}
	<-release
}

// where returns the file and line of a program counter, such as
// "shop.go:91".
func where(pc uintptr) string {
	f, _ := runtime.CallersFrames([]uintptr{pc}).Next()
	if f.File == "" {
		return "an unknown line"
	}
	file := f.File
	if i := strings.LastIndexByte(file, '/'); i >= 0 {
		file = file[i+1:]
	}
	return fmt.Sprintf("%s:%d", file, f.Line)
}

// GoroutineID returns the calling goroutine's id, read from the first
// line of its stack ("goroutine 7 [running]:"), with no allocation: the
// one reading of it in the checker, since a point reads it at every
// statement.
func GoroutineID() int {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	id := 0
	for _, c := range b[len("goroutine "):] {
		if c < '0' || c > '9' {
			break
		}
		id = 10*id + int(c-'0')
	}
	return id
}
