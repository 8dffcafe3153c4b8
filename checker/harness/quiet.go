package harness

import (
	"bytes"
	"fmt"
	"runtime"
	"runtime/metrics"
	"slices"
	"strings"
	"sync"
	"time"

	"stampede/checker/check"
	"stampede/checker/point"
	"stampede/checker/stack"
)

// RestBounds is how many hang bounds one wait for rest (Quiet, and
// fleet.Stage.Settle on a real server) may last while it lets
// held goroutines go one at a time.
const RestBounds = 12

// Quiet waits, as Settled does, until ready returns true and every
// goroutine but the caller's is parked. It decides on the same snapshots of
// all goroutines, but it looks again as soon as the scheduler's counts say
// the process may be at rest (see Lookout), instead of once a millisecond, and
// one snapshot in which every goroutine is parked is enough: runtime.Stack
// stops the world to take it, so the picture is consistent, and a parked
// goroutine only moves again when another goroutine or a timer wakes it.
// Settled's three snapshots in a row are a margin that Quiet trades for
// speed; it suits code that waits only on other goroutines and on a
// virtual clock, which the caller moves.
// As in stack.Parked, a goroutine in the runtime's own "semacquire"
// (waiting for a garbage collection, or for a file's lock) counts as
// moving, since it goes on by itself.
//
// A goroutine held at a schedule point (package point) is parked too;
// at rest, Quiet lets such goroutines go on one at a time, in the order
// the schedule chooses, and waits for rest again after each, so that it
// returns only when nothing is held: a hold never lasts across a move of
// the clock.
//
// Quiet is for drivers of virtual time, which must wait for the process to
// come to rest before every move of the clock, hundreds of times in one
// run. It returns a *Stuck error at the hang bound (see hang).
func (h *H) Quiet(ready func() bool) error {
	bound := newHang(h.bound)
	// Each release is progress (the process came to rest) and starts a
	// bound of its own: one bound for the thousand releases of a lockstep
	// play is a wall-clock limit on the play. Goroutines that wake each
	// other for ever, each held in turn, still meet the last bound.
	last := time.Now().Add(RestBounds * h.bound)
	released := func() { bound = newHang(min(h.bound, time.Until(last))) }
	// When the counts decide rest, a snapshot is only a fallback for a
	// process the counts never call idle: taken every millisecond while
	// a released goroutine worked on, they were most of a play.
	fresh := func() Lookout {
		if h.counts {
			return Lookout{last: time.Now(), every: maxSnapshotEvery}
		}
		return Lookout{}
	}
	look := fresh()
	for try := 0; ; try++ {
		if ready() && look.Due() {
			switch h.Look(&look) {
			case AtRest:
				return nil
			case LetGo:
				// A goroutine a schedule point held goes on now, and the
				// process must come to rest again, looked for as at the
				// start of a wait.
				look, try = fresh(), -1
				released()
			}
		}
		if err := h.ctx.Err(); err != nil {
			return err
		}
		if runtime.NumGoroutine() > MaxGoroutines {
			// Goroutines started without bound: the shop will not come
			// to rest, and under a schedule each would wait its turn.
			return h.flood(h.others())
		}
		if bound.past(h.others) {
			return h.stuck(h.others(), Running, fmt.Sprintf("still running after %v", h.bound))
		}
		pause(try)
	}
}

// Seen is what one look at the process found (H.Look).
type Seen int

const (
	// Working: some goroutine but the caller's is still at work.
	Working Seen = iota
	// AtRest: every goroutine but the caller's is parked, and none is
	// held at a schedule point.
	AtRest
	// LetGo: at rest but for a goroutine a schedule point held, which the
	// look has let go on; the process must come to rest again.
	LetGo
)

// Look takes one look at the process for a driver waiting for rest, and
// records it in look: Quiet's step, for a driver with a loop of its own
// (case 8's scene, which waits for Redis's answers too). Under a schedule
// (H.Under) or CountsDecideRest, the scheduler's counts decide when the
// next held goroutine goes on, and a snapshot of every goroutine must
// agree before AtRest; otherwise a snapshot decides.
func (h *H) Look(look *Lookout) Seen {
	buf := snapshots.Get().(*[]byte)
	defer snapshots.Put(buf)
	counted := h.turnsIdle()
	rest := counted || allParked(buf)
	look.Looked(rest)
	switch {
	case !rest:
		return Working
	case point.Release():
		return LetGo
	case !counted:
		return AtRest
	case allParked(buf):
		// The caller is about to count or move a clock, and the counts
		// call a goroutine that waits inside the runtime (a GC assist)
		// idle: a snapshot must agree. With the counts alone, case 10's
		// explorer once called a right answer deadlocked (scene 333, in a
		// process of 100 scenes; never when replayed alone).
		//
		// And the counts are approximate: they may have called the
		// process idle while a goroutine was on its way to a schedule
		// point, which it reached after the release above found none
		// held. Held now, it is parked in this snapshot like the rest,
		// and Quiet would report rest with it held: a scene that never
		// moves again, called a deadlock (case 9's proof,
		// right/refresheradd, scene 56 of the batch from seed 101; never
		// alone). Once every goroutine is parked, a goroutine at a point
		// has told the schedule so, and this look sees it.
		if !point.Release() {
			return AtRest
		}
		return LetGo
	default:
		look.Looked(false)
		return Working
	}
}

// Lookout tells a driver polling for rest when a snapshot is worth taking.
// A snapshot stops the world and reads every goroutine's stack: taken
// while the shop works, they took most of the processor from it (case
// 10's explorer spent four fifths of its time in them). So a snapshot is
// due at once when the scheduler's counts say that no other goroutine is
// running, ready to run, or in a system call (Go 1.26 and later), and
// otherwise only after an interval: the counts can say "busy" of a process
// at rest (a processor still looking for work, a goroutine of the
// runtime's own in a system call), so they only spare snapshots, never
// replace one, and the snapshot decides. The interval is a millisecond,
// doubled after each look that found the process at work while the counts
// said so, up to maxSnapshotEvery: in case 10's explorer nine in ten such
// looks found it still at work, and each one slowed it. Where the runtime
// has no counts, a snapshot is due every millisecond.
//
// The zero Lookout is ready for a new wait.
type Lookout struct {
	last  time.Time     // when the last snapshot was taken
	every time.Duration // the interval while the counts say busy; 0 for snapshotEvery
}

// Due reports whether a snapshot should be taken now.
func (l *Lookout) Due() bool {
	idle, known := schedulerIdle()
	if known && idle {
		return true
	}
	every := l.every
	if every == 0 || !known {
		every = snapshotEvery
	}
	return time.Since(l.last) >= every
}

// Looked records a snapshot taken now, and whether it found the process at
// rest.
func (l *Lookout) Looked(rest bool) {
	l.last = time.Now()
	switch {
	case rest:
		l.every = 0
	case l.every == 0:
		l.every = 2 * snapshotEvery
	default:
		l.every = min(2*l.every, maxSnapshotEvery)
	}
}

// snapshotEvery is the first interval at which a Lookout looks while the
// scheduler's counts say the process is at work, and maxSnapshotEvery the
// longest (see Lookout).
const (
	snapshotEvery    = time.Millisecond
	maxSnapshotEvery = 16 * time.Millisecond
)

// pause lets other goroutines run between looks: a yield at first, and a
// sleep only when the process takes long to come to rest. (A short sleep
// lasts a millisecond or more on many machines, far longer than a yield.)
func pause(try int) {
	if try < 64 {
		runtime.Gosched()
		return
	}
	time.Sleep(50 * time.Microsecond)
}

// snapshots holds buffers for allParked.
var snapshots = sync.Pool{New: func() any { b := make([]byte, 1<<16); return &b }}

// allParked reports whether, in one snapshot of all goroutines, every
// goroutine but the caller's is parked. It reads only each goroutine's
// header line ("goroutine 7 [sync.Mutex.Lock]:"), which keeps a snapshot
// cheap enough to take hundreds of times a run, and the frames of a
// goroutine that is not parked, to leave out the harness's own watchers
// (a story's watchdog, polling on its own ticker), which touch nothing the
// caller drives. buf is reused between snapshots and grown when it is too
// small.
func allParked(buf *[]byte) bool {
	var dump []byte
	for {
		n := runtime.Stack(*buf, true)
		if n < len(*buf) {
			dump = (*buf)[:n]
			break
		}
		*buf = make([]byte, 2*len(*buf))
	}
	caller := true // runtime.Stack puts the caller first
	for len(dump) > 0 {
		var line []byte
		line, dump, _ = bytes.Cut(dump, []byte("\n"))
		if !bytes.HasPrefix(line, []byte("goroutine ")) || !bytes.HasSuffix(line, []byte("]:")) {
			continue
		}
		if caller {
			caller = false
			continue
		}
		state := line[bytes.IndexByte(line, '[')+1 : len(line)-2]
		if i := bytes.IndexByte(state, ','); i >= 0 {
			state = state[:i]
		}
		if stack.Parked(string(state)) {
			continue
		}
		frames, _, _ := bytes.Cut(dump, []byte("\n\n"))
		if !bytes.HasPrefix(frames, watcherFrame[1:]) && !bytes.Contains(frames, watcherFrame) {
			return false
		}
	}
	return true
}

// awaitFunc is the harness's own polling loop, in which a story's watchdog
// runs.
const awaitFunc = check.Module + "/checker/harness.(*H).await"

// watcherFrame marks a goroutine in awaitFunc in a dump of stacks.
var watcherFrame = []byte("\n" + awaitFunc + "(")

// Watcher reports whether g is the harness's own watchdog: a story's, which
// polls on its own ticker while the story runs in another goroutine. It
// touches nothing the story drives, so a driver waiting for the process to
// come to rest must leave it out. Counted in, it keeps a loaded process
// from ever looking at rest: on a busy machine its work on one tick can
// last until the next.
func Watcher(g stack.Goroutine) bool {
	return slices.ContainsFunc(g.Frames, func(f stack.Frame) bool { return f.Func == awaitFunc })
}

// Blocked says where visitors are waiting inside the implementation's own
// package, such as "3 visitors stuck at cases/case07/shop.go:40 in
// sync.Mutex.Lock". Visitors waiting in the checker's own code, such as
// the idle readers of a virtual-time driver, are left out.
func (h *H) Blocked() string {
	var mine []stack.Goroutine
	for _, g := range h.others() {
		if isVisitor(g) && g.Has(h.dir) {
			mine = append(mine, g)
		}
	}
	return strings.Join(h.stuck(mine, 0, "").Places, "; ")
}

// Idle reports, as cheaply as the runtime allows, whether every goroutine
// but the caller's is parked. Where the runtime has scheduler metrics of
// goroutine states (Go 1.26 and later), it asks them: no other goroutine
// running, ready to run, or in a system call. That costs a fraction of a
// microsecond. It may answer false when the process is at rest (a
// processor still looking for work), which costs the caller a snapshot
// only; it answers true for a goroutine that is not parked only if that
// goroutine is waiting inside the runtime, for a garbage collection, at
// that very moment. Elsewhere it takes a snapshot, as Parked does.
func (h *H) Idle() bool {
	if idle, known := schedulerIdle(); known {
		return idle
	}
	return h.Parked()
}

// schedulerIdle reads the runtime's scheduler metrics: idle when only the
// caller's processor is running and no goroutine waits to run or is in a
// system call. known is false where the runtime lacks the metrics.
func schedulerIdle() (idle, known bool) {
	samples := []metrics.Sample{
		{Name: "/sched/goroutines/running:goroutines"},
		{Name: "/sched/goroutines/runnable:goroutines"},
		{Name: "/sched/goroutines/not-in-go:goroutines"},
	}
	metrics.Read(samples)
	for _, s := range samples {
		if s.Value.Kind() != metrics.KindUint64 {
			return false, false
		}
	}
	return samples[0].Value.Uint64() <= 1 && samples[1].Value.Uint64() == 0 && samples[2].Value.Uint64() == 0, true
}

// Parked reports whether, in one snapshot of all goroutines, every
// goroutine but the caller's is parked.
func (h *H) Parked() bool {
	buf := snapshots.Get().(*[]byte)
	defer snapshots.Put(buf)
	return allParked(buf)
}

// Bound returns the hang bound: how long code may run without settling.
func (h *H) Bound() time.Duration { return h.bound }
