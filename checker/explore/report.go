package explore

import (
	"fmt"
	"strings"
)

// maxScene is the longest description of a shrunk scene that an
// explorer's FAIL carries: a line or two. A longer one (a scene that needs
// twenty-one readers to crowd a pool of twenty) is left to the command
// that plays the scene, which shows it whole, event by event.
const maxScene = 240

// Failure is what an explorer's FAIL says about the scene that broke an
// invariant.
type Failure struct {
	Bad   string // the invariant broken, in the scene's terms
	Scene string // the shrunk scene, described
	// Kept and From say how far the shrinking went: Kept of From
	// visitors (readers, for case 8; Noun names them). Zero when a scene
	// has no such count.
	Kept, From int
	Noun       string
	Replay     string // the command that replays the scene: "go run ./shop check 8 --seed 17"
	Watch      string // the one that shows it whole: "go run ./shop run 8 --seed 17 --timeline"
	// Shrunk says a smaller scene broke the rule too; without it the
	// scene is the one drawn, and no smaller one broke a rule in the time
	// shrinking had.
	Shrunk bool
	// Fixed says the scene is one of Switches' fixed scenes, whose seed
	// replays the same schedule, and Switch that the schedule stopped a
	// visitor between two statements: the message says where to look
	// instead of "try a few times".
	Fixed, Switch bool
	// Lockstep says the schedule was the lockstep one: the goroutines
	// took turns one statement each.
	Lockstep bool
	// Scheduled says the explorer plays every scene under a schedule of
	// the code's own points, drawn from the seed, so that the seed
	// replays the same interleaving, not only the same scene.
	Scheduled bool
}

// String returns the FAIL's message in three lines: what broke; the scene,
// when it is short enough to read; and the two commands that replay it
// and show it whole, event by event.
func (f Failure) String() string {
	var b strings.Builder
	b.WriteString(strings.TrimSuffix(f.Bad, "."))
	b.WriteString(".\n")
	switch {
	case f.Shrunk && f.From > 0 && f.Kept == f.From:
		// Shrinking took something else away (a cost, a failure, a
		// reader who leaves), and every visitor was needed.
		fmt.Fprintf(&b, "The scene, made simpler (each of its %d %s needed)", f.Kept, f.Noun)
	case f.Shrunk && f.From > 0:
		fmt.Fprintf(&b, "The scene, shrunk from %d %s to %d", f.From, f.Noun, f.Kept)
	case f.Shrunk:
		b.WriteString("The scene, shrunk")
	case f.From > 0:
		fmt.Fprintf(&b, "The scene, of %d %s (no smaller one broke a rule)", f.From, f.Noun)
	default:
		b.WriteString("The scene (no smaller one broke a rule)")
	}
	if len(f.Scene) <= maxScene {
		fmt.Fprintf(&b, ": %s.\n", strings.TrimSuffix(f.Scene, "."))
	} else {
		b.WriteString(", is too long to show here.\n")
	}
	fmt.Fprintf(&b, "Replay it: `%s`; see it whole, event by event: `%s`", f.Replay, f.Watch)
	switch {
	case f.Lockstep:
		b.WriteString(" (the goroutines took turns, one statement each: look for a check and the act on it, in two statements, " +
			"that two of them both passed before either acted)")
	case f.Switch:
		b.WriteString(" (where the switch held a visitor, the bug is in the gap before the next statement)")
	case f.Fixed:
		b.WriteString(" (the seed plays the same schedule again, one with no switch)")
	case f.Scheduled:
		b.WriteString(" (the seed plays the same scene under the same schedule of your statements again)")
	default:
		// A scene is the same every time, but how the goroutines
		// interleave within one instant is the scheduler's: a bug that
		// needs one interleaving may not come back at the first replay.
		b.WriteString(" (a replay that passes: try a few times, the bug needs an interleaving)")
	}
	return b.String()
}
