package explore

import (
	"fmt"
	"io"
	"math/rand/v2"

	"stampede/checker/check"
	"stampede/checker/harness"
	"stampede/checker/point"
)

// An Explorer is one case's explorer: the loop that draws random scenes
// from a seed, plays each on fresh shops, holds it to the case's rules,
// and shrinks the first scene that breaks one. Every case's explorer is
// one, S its scene; the case supplies how a scene is drawn, played and
// made smaller, and the loop, its policy for a scene that never comes to
// rest, the shrinking and the report are the same for every case.
//
// A scene is decided by what Play found, in this order:
//
//   - Err: the checker could not play it (Redis could not be reached).
//     The check fails with that error; no verdict on the code.
//   - a Stuck whose Load says the machine was too busy: the scene is
//     played again, twice at most. A scene that never came to rest in
//     three plays is set aside, with no verdict either way; when more
//     than half the scenes of a run are set aside, the run fails, since
//     then a shop that never rests (one whose loop was never caught on a
//     processor) is likelier than a machine that busy.
//   - a Stuck of the code's own (a deadlock, a flood of goroutines, its
//     loop caught at work, visitors inside it that never settle): a
//     broken rule. A loop is reported at once, as the harness's hang,
//     so that the grader starts no more checks that would meet it; a
//     deadlock is shrunk like any other broken rule.
//   - Bad: the first rule broken; the scene is shrunk and reported.
type Explorer[S fmt.Stringer] struct {
	// Case is the case's number, for the commands that replay a scene.
	Case int
	// Scenes is how many scenes one run of the check plays.
	Scenes int
	// Unit names the scenes in the passing figure ("fleet scenes"), and
	// Each, when set, what each of them is (", each 12 windows of
	// traffic").
	Unit, Each string
	// Draw returns the scene of a seed: the same scene every time.
	Draw func(seed uint64) S
	// Prepare, when set, runs once before the first play, never under a
	// schedule: what a case learns from the shop once a run (case 6: the
	// keys of its lock) must not take points, priorities or steps from the
	// first scene's schedule, or a seed's play in `run N --seed S` would
	// differ from the same seed's play in the check.
	Prepare func(h *harness.H)
	// Play plays a scene on fresh shops and judges it. With story set
	// it keeps the scene's timeline in Played.Lines.
	Play func(h *harness.H, sc S, story bool) Played
	// Smaller returns the scenes one step smaller than sc, the biggest
	// steps first.
	Smaller func(sc S) []S
	// Tries is how many plays a smaller scene gets to break a rule (1
	// when zero): some bugs need a schedule that comes only now and then.
	Tries int
	// Size counts a scene's visitors (readers, for case 8; Noun names
	// them), so that a failure says how far shrinking went. Nil when a
	// scene has no such count.
	Size func(sc S) int
	Noun string
	// Untimed says `shop run N --seed S` plays a scene as a story with no
	// --timeline (case 7's, whose story always draws its scene).
	Untimed bool
	// Points plays every scene under a schedule of the code's own points
	// (package point), drawn from the scene's seed. Only a case whose
	// Play rests with harness.H.Quiet, which lets held goroutines go, may
	// set it.
	Points bool
	// Fixed are small scenes that Switches plays, with Points, under
	// every schedule with at most one switch: both orders of their
	// goroutines, and a change point at each contended step in turn
	// (point.Schedule.Contended). A bug that
	// needs one goroutine to stop between two statements while another
	// runs, in one of these scenes, fails every run, not now and then.
	Fixed []S

	prepared bool
}

// The schedules of an explorer with Points. A random scene's schedule
// has d-1 change points, d drawn from 1 to maxDepth, each among the
// first changeSpan steps (points the running goroutine reached while
// another was held). A change point past the scene's last step is never
// reached, and the scene plays with one fewer.
const (
	maxDepth   = 3
	changeSpan = 32
)

// A fixed scene's plays have seeds of their own, from fixedBase up, so
// that `check N --seed S` and `run N --seed S` replay one as they replay
// a random scene: fixedBase + scene·fixedStride + order·(maxSwitch+1) +
// change point. Change points below maxSwitch are single switches;
// maxSwitch itself is the lockstep play, with a change point at every
// step (point.Lockstep), so that the goroutines take turns one
// statement each: two visitors of the same code then both look before
// either acts, which no single switch makes happen (a count added to and
// read back in two steps, both adding before either reads).
const (
	fixedBase   = 1 << 40
	maxSwitch   = 99
	fixedStride = 2 * (maxSwitch + 1)
	lockstep    = maxSwitch
)

// fixedSeed returns the seed of fixed scene i, in an order (0 or 1),
// with a change point at step c (0: none).
func fixedSeed(i, order, c int) uint64 {
	return fixedBase + uint64(i*fixedStride+order*(maxSwitch+1)+c)
}

// fixedScene reports whether seed is the seed of a play of a fixed scene.
func (e *Explorer[S]) fixedScene(seed uint64) bool {
	return seed >= fixedBase && (seed-fixedBase)/fixedStride < uint64(len(e.Fixed))
}

// scene returns the scene of a seed: a fixed scene's, or a drawn one.
func (e *Explorer[S]) scene(seed uint64) S {
	if e.fixedScene(seed) {
		return e.Fixed[(seed-fixedBase)/fixedStride]
	}
	return e.Draw(seed)
}

// schedule returns the schedule of the scene of a seed.
func (e *Explorer[S]) schedule(seed uint64) *point.Schedule {
	if e.fixedScene(seed) {
		rest := int((seed - fixedBase) % fixedStride)
		order, c := rest/(maxSwitch+1), rest%(maxSwitch+1)
		switch c {
		case 0:
			return point.Ordered(order == 1)
		case lockstep:
			return point.Lockstep(order == 1)
		}
		return point.Ordered(order == 1, c)
	}
	r := rand.New(rand.NewPCG(seed, 0x5ced))
	d := 1 + r.IntN(maxDepth)
	changes := make([]int, d-1)
	for i := range changes {
		changes[i] = 1 + r.IntN(changeSpan)
	}
	return point.PCT(seed, changes...)
}

// play plays a scene, under the schedule of seed when e has Points.
func (e *Explorer[S]) play(h *harness.H, sc S, story bool, seed uint64) Played {
	if e.Prepare != nil && !e.prepared {
		e.prepared = true
		e.Prepare(h)
	}
	if !e.Points {
		return e.Play(h, sc, story)
	}
	s := e.schedule(seed)
	point.Start(s)
	res := e.Play(h, sc, story)
	point.Stop()
	res.hits, res.contended = s.Hits(), s.Contended()
	return res
}

// Played is what one play of a scene found.
type Played struct {
	Bad   string         // the first rule broken, in the scene's terms; "" when every rule held
	Stuck *harness.Stuck // the scene never came to rest (see Explorer)
	Err   error          // the checker could not play the scene
	Lines []string       // the timeline, when the play was a story's

	contended []int // the steps at which a switch lets another goroutine run
	hits      int   // the points reached
}

// broken returns the rule the play broke, "" when it broke none or the
// machine kept it from an answer, and whether the code never stopped
// running.
func (p Played) broken() (bad string, loop bool) {
	if p.Stuck != nil {
		if p.Stuck.Load() {
			return "", false
		}
		if p.Stuck.Cause == harness.Running && p.Stuck.Looping {
			return "the shop never came to rest: " + p.Stuck.Error(), true
		}
		if p.Bad == "" {
			return "the shop never came to rest: " + p.Stuck.Error(), false
		}
	}
	return p.Bad, false
}

// restless reports whether the machine kept the scene from rest.
func (p Played) restless() bool { return p.Err == nil && p.Stuck != nil && p.Stuck.Load() }

// DefaultSeed is the seed of the first scene a check plays when `check N`
// names none. Every run plays the same scenes under the same schedules,
// so one answer gets one verdict: on the student's machine, in CI and in
// the instructor's grade. `check N --seed S` plays the scenes from S
// instead, to look further than the check does.
const DefaultSeed = 1

// Check plays e.Scenes scenes from the check's seed: the seed `check N
// --seed S` hands it, whose scene it plays first, or DefaultSeed. (A seed
// of the fixed scenes is Switches' to replay.)
func (e *Explorer[S]) Check(h *harness.H) check.Verdict {
	seed := h.Seed()
	if seed == 0 || seed >= fixedBase {
		seed = DefaultSeed
	}
	return e.Run(h, seed, e.Scenes)
}

// Switches plays each fixed scene under every schedule with at most one
// switch: in each order, once with none, which finds its contended steps
// (point.Schedule.Contended: those where another goroutine is held, so
// that a switch there changes the play), once with a change point at
// each of them, and once in lockstep (a change point at every step). Given
// one of their seeds, it replays that play first. A check played in n
// parts (check.Info.Parts, at most two per scene) plays, in part k, every
// n-th of the scenes' orders from the k-th (harness.H.Part).
func (e *Explorer[S]) Switches(h *harness.H) check.Verdict {
	if len(e.Fixed) == 0 || !e.Points {
		return check.Failed("", "the explorer has no fixed scenes to play")
	}
	if seed := h.Seed(); seed >= fixedBase {
		if v := e.Run(h, seed, 1); !v.Pass {
			return v
		}
	}
	plays, hits, busy := 0, 0, 0
	part, parts := h.Part()
	for i, sc := range e.Fixed {
		for order := range 2 {
			if (2*i+order)%parts != part {
				continue
			}
			changes := []int{0} // no switch first; then each contended step
			for k := 0; k < len(changes); k++ {
				c := changes[k]
				seed := fixedSeed(i, order, c)
				res := e.playAgain(h, sc, false, seed)
				plays++
				if c == 0 {
					for _, step := range res.contended {
						if step < lockstep {
							changes = append(changes, step)
						}
					}
					if len(res.contended) > 0 {
						changes = append(changes, lockstep)
					}
				}
				hits += res.hits
				if res.Err != nil {
					return check.Failed("", fmt.Sprintf("fixed scene %d could not be played: %v", i+1, res.Err))
				}
				if res.restless() {
					busy++ // set aside, as Run sets a scene aside
					continue
				}
				bad, loop := res.broken()
				if bad == "" {
					continue
				}
				figure := fmt.Sprintf("fixed scene %d of %d broke an invariant, in order %d with no switch (seed %d)",
					i+1, len(e.Fixed), order+1, seed)
				switch {
				case c == lockstep:
					figure = fmt.Sprintf("fixed scene %d of %d broke an invariant, in order %d with its goroutines taking turns "+
						"one statement each (seed %d)", i+1, len(e.Fixed), order+1, seed)
				case c > 0:
					figure = fmt.Sprintf("fixed scene %d of %d broke an invariant, in order %d with a switch at step %d (seed %d)",
						i+1, len(e.Fixed), order+1, c, seed)
				}
				v := check.Failed(figure, e.failure(sc, sc, bad, seed, false))
				v.Hung = loop
				return v
			}
		}
	}
	if busy*2 > plays {
		return check.Failed(fmt.Sprintf("%d of %d plays never came to rest", busy, plays),
			"most plays of the fixed scenes never came to rest, in three tries each: look for a goroutine of the shop that never "+
				"stops running (a loop that polls without sleeping on the clock it is given)")
	}
	if hits == 0 {
		// Built without points (the grader's copy did not compile), the
		// scenes played, but no schedule could switch anywhere.
		return check.Skipped("the code has no schedule points: the grader could not build its copy of your files with them " +
			"(a name of yours, stampedepoint, clashes with the one the copy imports): rename it")
	}
	scenes := fmt.Sprintf("%d scenes", len(e.Fixed))
	if len(e.Fixed) == 1 {
		scenes = "1 scene"
	}
	figure := fmt.Sprintf("%s under %d schedules", scenes, plays-busy)
	if parts > 1 {
		figure = fmt.Sprintf("%s, part %d of %d: %d schedules", scenes, part+1, parts, plays-busy)
	}
	if busy > 0 {
		figure += fmt.Sprintf(" (%d set aside: the machine was too busy for them to come to rest)", busy)
	}
	return check.Passed(figure)
}

// Run plays n scenes from seed (0: a random one, for tests that look
// further than the check does), scene i being the
// scene of seed+i, and stops at the first that breaks a rule.
func (e *Explorer[S]) Run(h *harness.H, seed uint64, n int) check.Verdict {
	if seed == 0 {
		seed = 1 + rand.Uint64N(1_000_000)
	}
	busy := 0
	for i := range n {
		sc := e.scene(seed + uint64(i))
		res := e.playAgain(h, sc, false, seed+uint64(i))
		if res.Err != nil {
			return check.Failed("", fmt.Sprintf("scene %d (seed %d) could not be played: %v", i+1, seed+uint64(i), res.Err))
		}
		if res.restless() {
			busy++
			continue
		}
		bad, loop := res.broken()
		if bad == "" {
			continue
		}
		figure := fmt.Sprintf("scene %d of %d broke an invariant (seed %d)", i+1, n, seed+uint64(i))
		if loop {
			v := check.Failed(figure, e.failure(sc, sc, bad, seed+uint64(i), false))
			v.Hung = true
			return v
		}
		small, bad, shrunk := e.shrink(h, sc, bad, seed+uint64(i))
		return check.Failed(figure, e.failure(sc, small, bad, seed+uint64(i), shrunk))
	}
	if busy*2 > n {
		return check.Failed(fmt.Sprintf("%d of %d scenes never came to rest (seed %d)", busy, n, seed),
			"the scenes never came to rest, in three plays each, in most scenes: look for a goroutine of the shop that never "+
				"stops running (a loop that polls without sleeping on the clock it is given)")
	}
	figure := fmt.Sprintf("%d %s from seed %d%s", n-busy, e.unit(), seed, e.Each)
	if busy > 0 {
		figure += fmt.Sprintf(" (%d set aside: the machine was too busy for them to come to rest)", busy)
	}
	return check.Passed(figure)
}

func (e *Explorer[S]) unit() string {
	if e.Unit == "" {
		return "scenes"
	}
	return e.Unit
}

// playAgain plays a scene, and again (twice at most) while the machine
// keeps it from rest.
func (e *Explorer[S]) playAgain(h *harness.H, sc S, story bool, seed uint64) Played {
	res := e.play(h, sc, story, seed)
	for try := 0; res.restless() && try < 2; try++ {
		res = e.play(h, sc, story, seed)
	}
	return res
}

// shrink looks for a smaller scene that still breaks a rule, within
// ShrinkBudget: the budget decides how small the report is, never the
// verdict. A candidate the machine kept from rest counts as keeping
// every rule. It reports whether it found a smaller scene.
//
// A smaller scene plays under the schedule of the scene's own seed first,
// and of seeds after it on its further tries: a schedule is a choice at
// each contended step, and a smaller scene has other steps.
func (e *Explorer[S]) shrink(h *harness.H, sc S, bad string, seed uint64) (S, string, bool) {
	if e.Smaller == nil {
		return sc, bad, false
	}
	steps := 0
	small, bad := Shrink(sc, bad, e.Smaller, func(c S) string {
		for try := range max(e.Tries, 1) {
			res := e.play(h, c, false, seed+uint64(try)*1_000_003)
			if res.Err != nil {
				return ""
			}
			b, loop := res.broken()
			if loop {
				return "" // a loop costs the hang bound each play: not worth shrinking
			}
			if b != "" {
				steps++
				return b
			}
		}
		return ""
	})
	return small, bad, steps > 0
}

// failure is the message of a failing scene: what broke, the scene
// shrunk, and the commands that replay it.
func (e *Explorer[S]) failure(sc, small S, bad string, seed uint64, shrunk bool) string {
	f := Failure{
		Bad: bad, Scene: small.String(), Shrunk: shrunk,
		Fixed:     e.fixedScene(seed),
		Switch:    e.fixedScene(seed) && (seed-fixedBase)%(maxSwitch+1) != 0,
		Lockstep:  e.fixedScene(seed) && (seed-fixedBase)%(maxSwitch+1) == lockstep,
		Scheduled: e.Points,
		Replay:    fmt.Sprintf("go run ./shop check %d --seed %d", e.Case, seed),
		Watch:     fmt.Sprintf("go run ./shop run %d --seed %d", e.Case, seed),
	}
	if !e.Untimed {
		f.Watch += " --timeline"
	}
	if e.Size != nil {
		f.Kept, f.From, f.Noun = e.Size(small), e.Size(sc), e.Noun
	}
	return f.String()
}

// Replay is `shop run N --seed S` for a Redis case: it plays the scene of
// seed as a story (Story) and writes it (Tell), with every line of its
// timeline when timeline is set, on the shops' clock. An error is the
// checker's: Redis could not be reached.
func (e *Explorer[S]) Replay(h *harness.H, w io.Writer, seed uint64, timeline bool) error {
	sc, res, shrunk := e.Story(h, seed)
	if res.Err != nil {
		return res.Err
	}
	Tell(w, seed, sc, res, shrunk, timeline, "the shops' clock")
	return nil
}

// Story plays the scene of a seed as `shop run N --seed S` shows it:
// played again while the machine keeps it from rest and, when it breaks a
// rule, shrunk as the check shrinks it. It returns the scene it played
// last, what that play found, and whether the scene was shrunk.
func (e *Explorer[S]) Story(h *harness.H, seed uint64) (sc S, res Played, shrunk bool) {
	sc = e.scene(seed)
	res = e.playAgain(h, sc, true, seed)
	bad, loop := res.broken()
	if res.Err != nil || bad == "" || loop || e.fixedScene(seed) {
		return sc, res, false // a fixed scene is told as Switches played it, whole
	}
	small, _, smaller := e.shrink(h, sc, bad, seed)
	if !smaller {
		return sc, res, false
	}
	if again := e.playAgain(h, small, true, seed); again.Err == nil {
		if b, _ := again.broken(); b != "" {
			return small, again, true
		}
	}
	return sc, res, false
}

// Verdict says in a sentence what a story's play found: the rule broken,
// that the machine kept it from rest, or that every rule held.
func (p Played) Verdict() string {
	if p.restless() {
		return "The scene never came to rest, in three plays (a busy machine): play it again."
	}
	if bad, _ := p.broken(); bad != "" {
		return "Broken: " + bad + "."
	}
	return "Every invariant held."
}

// Tell writes a story's scene as the Redis cases show it: the scene, what
// its play found, and with timeline every line of it, under a heading
// that names the clock the lines are on ("the shops' clock").
func Tell[S fmt.Stringer](w io.Writer, seed uint64, sc S, res Played, shrunk, timeline bool, clock string) {
	fmt.Fprintf(w, "The explorer's scene %d", seed)
	if shrunk {
		fmt.Fprintf(w, ", shrunk to the smallest scene that still breaks an invariant")
	}
	fmt.Fprintf(w, ": %s.\n\n%s\n", sc, res.Verdict())
	if timeline {
		fmt.Fprintf(w, "\nWhat happened, on %s:\n\n", clock)
		for _, l := range res.Lines {
			fmt.Fprintln(w, l)
		}
	}
}
