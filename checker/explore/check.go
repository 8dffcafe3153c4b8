package explore

import (
	"context"
	"fmt"
	"io"
	"reflect"

	"stampede/checker/check"
	"stampede/checker/harness"
	"stampede/checker/shelves"
	"stampede/shop/catalog"
)

// Scenes is how many scenes one run of the check plays.
const Scenes = 300

// Info is the check's description, for each case's list of checks.
var Info = check.Info{
	ID:     "explore",
	Scenes: true,
	Name:   "hundreds of random scenes keep every invariant (arrivals during and just after a fill, overlapping shelves, changing query costs)",
	Catches: "bugs no single scene stages: a visitor arriving just as a fill lands and querying again, a fill that loses another shelf's entry, " +
		"a cache that keeps nothing between bursts, and (case 5) a failure or a cancellation that reaches visitors it does not belong to",
}

// SwitchesInfo is the check of the fixed scenes, for each case's list of
// checks.
var SwitchesInfo = check.Info{
	ID:     "switches",
	Scenes: true,
	Parts:  2, // its plays, split by order: the long pole of a check
	Name: "small scenes keep every invariant under every schedule with one switch between two of the shop's statements, " +
		"and with the goroutines taking turns one statement each " +
		"(two misses at once, a miss as a fill lands, two shelves filled at once, a miss as another shelf's fill lands)",
	Catches: "a look and an act with nothing between them: a cache loaded, copied and stored back with no lock, a flag read and then set, " +
		"a flight forgotten or a lock dropped a line before the list is stored, a second look on one path only, locks taken in opposite orders",
}

// Switches plays the fixed scenes of a case under every schedule with
// one switch (see Explorer.Fixed).
func Switches(h *harness.H, newShop shelves.New, p Profile) check.Verdict {
	return For(newShop, p).Switches(h)
}

// For returns the explorer of cases 1 to 5 for an implementation and a
// case's profile.
func For(newShop shelves.New, p Profile) *Explorer[Scene] {
	return &Explorer[Scene]{
		Case:   p.Case,
		Scenes: Scenes,
		Draw:   func(seed uint64) Scene { return Draw(seed, p) },
		Play: func(h *harness.H, sc Scene, story bool) Played {
			res := play(h, newShop, p, sc, story)
			return Played{Bad: res.bad, Stuck: res.stuck, Lines: res.lines}
		},
		Smaller: candidates,
		// Some bugs need a schedule that comes only now and then: a
		// smaller scene counts when it breaks a rule in either of two plays.
		Tries:  2,
		Size:   func(sc Scene) int { return len(sc.Visitors) },
		Noun:   "visitors",
		Points: true,
		Fixed:  Fixed(p),
	}
}

// Fixed returns the scenes a case's explorer plays first, under every
// schedule with one switch (see Explorer.Fixed): each the smallest scene
// of a gap a correct shop must not have between two of its statements.
// A shelf's query costs a millisecond; the last visitors of a scene come
// after its queries have landed, to see what the cache kept.
func Fixed(p Profile) []Scene {
	x, y := catalog.Bestsellers, catalog.StaffPicks
	one := []Plan{{Cost: ms}}
	scene := func(plans map[string][]Plan, vs ...Visitor) Scene {
		return Scene{Visitors: vs, Plans: plans}
	}
	both := map[string][]Plan{x: one, y: one}
	out := []Scene{
		// Two misses at once: one must query, and the other wait for it.
		scene(map[string][]Plan{x: one}, Visitor{Shelf: x}, Visitor{Shelf: x}, Visitor{Shelf: x, At: 2 * ms}),
		// A miss just as the first fill lands: it must find the list,
		// or the flight, not query again.
		scene(map[string][]Plan{x: one}, Visitor{Shelf: x}, Visitor{Shelf: x, At: ms}, Visitor{Shelf: x, At: 2 * ms}),
		// Two shelves filled at once: neither fill may lose the other.
		scene(both, Visitor{Shelf: x}, Visitor{Shelf: y}, Visitor{Shelf: x, At: 2 * ms}, Visitor{Shelf: y, At: 2 * ms}),
		// A miss of one shelf while another shelf's fill lands: the
		// two paths' locks must not cross.
		scene(both, Visitor{Shelf: x}, Visitor{Shelf: y, At: ms}, Visitor{Shelf: x, At: 3 * ms}, Visitor{Shelf: y, At: 3 * ms}),
	}
	if p.Faults {
		// A failure lands while a second visitor joins: the error is the
		// flight's, and the next miss queries again.
		out = append(out, scene(map[string][]Plan{x: {{Cost: ms, Fault: Fails}, {Cost: ms}}},
			Visitor{Shelf: x}, Visitor{Shelf: x, At: ms}, Visitor{Shelf: x, At: 3 * ms}))
	}
	if p.Leave {
		// The visitor whose miss started the query leaves as it lands.
		out = append(out, scene(map[string][]Plan{x: one},
			Visitor{Shelf: x, Leave: ms, Deadline: true}, Visitor{Shelf: x}, Visitor{Shelf: x, At: ms}))
		// The only visitor waiting leaves just as another joins: the
		// query must go on for the one who joined.
		out = append(out, scene(map[string][]Plan{x: {{Cost: 2 * ms}}},
			Visitor{Shelf: x, Leave: ms, Deadline: true}, Visitor{Shelf: x, At: ms}, Visitor{Shelf: x, At: 3 * ms}))
	}
	return out
}

// Check plays Scenes scenes on fresh shops. Given a seed, scene i is
// the scene of seed+i, so a reported seed replays its scene first;
// without one, it starts from DefaultSeed.
func Check(h *harness.H, newShop shelves.New, p Profile) check.Verdict {
	return For(newShop, p).Check(h)
}

// candidates returns the scenes one step smaller than sc, the biggest
// steps first.
func candidates(sc Scene) []Scene {
	var out []Scene
	edit := func(f func(*Scene) bool) {
		c := sc.clone()
		if f(&c) {
			out = append(out, c)
		}
	}
	for j := len(sc.Visitors) - 1; j >= 0 && len(sc.Visitors) > 1; j-- {
		edit(func(c *Scene) bool {
			c.Visitors = append(c.Visitors[:j], c.Visitors[j+1:]...)
			return true
		})
	}
	for s, ps := range sc.Plans {
		used := false
		for _, v := range sc.Visitors {
			used = used || v.Shelf == s
		}
		if !used {
			edit(func(c *Scene) bool { delete(c.Plans, s); return true })
		}
		if len(ps) > 1 {
			edit(func(c *Scene) bool { c.Plans[s] = c.Plans[s][:len(ps)-1]; return true })
		}
		for k, pl := range ps {
			if pl.Fault != Works {
				edit(func(c *Scene) bool { c.Plans[s][k].Fault = Works; return true })
			}
			if pl.Cost > ms {
				edit(func(c *Scene) bool { c.Plans[s][k].Cost = ms; return true })
			}
		}
	}
	for j, v := range sc.Visitors {
		if v.Leave > 0 {
			edit(func(c *Scene) bool { c.Visitors[j].Leave, c.Visitors[j].Deadline = 0, false; return true })
		}
		if v.At >= ms {
			edit(func(c *Scene) bool {
				c.Visitors[j].At -= ms
				if c.Visitors[j].Leave > 0 {
					c.Visitors[j].Leave = max(1, c.Visitors[j].Leave-ms)
				}
				return true
			})
		}
	}
	return out
}

// Story plays the scene of a seed as a story, for `shop run N --seed S`:
// the scene, what broke (shrunk as the check shrinks it), and with
// timeline, every event in order on the scene's clock.
func Story(ctx context.Context, w io.Writer, newShop shelves.New, p Profile, seed uint64, timeline bool) error {
	h := harness.New(ctx, pkgOf(newShop), harness.DefaultBound)
	sc, res, shrunk := For(newShop, p).Story(h, seed)
	fmt.Fprintf(w, "The explorer's scene %d", seed)
	if shrunk {
		fmt.Fprintf(w, ", shrunk to the smallest scene that still breaks an invariant")
	}
	fmt.Fprintf(w, ": %s.\n\n", sc)
	for i, v := range sc.Visitors {
		fmt.Fprintf(w, "  %s\n", v.describe(i))
	}
	fmt.Fprintf(w, "\n%s\n", res.Verdict())
	if timeline {
		fmt.Fprintf(w, "\nWhat happened, on the scene's clock (events a few yields apart came before the process rested):\n\n")
		for _, l := range res.Lines {
			fmt.Fprintln(w, l)
		}
	}
	return nil
}

// pkgOf returns the import path of the implementation behind newShop, so
// that stuck visitors are placed in its lines.
func pkgOf(newShop shelves.New) string {
	t := reflect.TypeOf(newShop(catalog.New(catalog.WithCost(0))))
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil {
		return ""
	}
	return t.PkgPath()
}

// Checks are the explorer's two checks of one of cases 1 to 5, random
// scenes (Info) and every schedule of the fixed ones (SwitchesInfo), to
// close the case's list.
func Checks(p Profile) []harness.Check[shelves.New] {
	return []harness.Check[shelves.New]{
		{Info: Info, Run: func(h *harness.H, mk shelves.New) check.Verdict { return Check(h, mk, p) }},
		{Info: SwitchesInfo, Run: func(h *harness.H, mk shelves.New) check.Verdict { return Switches(h, mk, p) }},
	}
}
