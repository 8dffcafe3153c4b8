package explore

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
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

// Check plays Scenes scenes on fresh shops. Given a seed, scene i is
// the scene of seed+i, so a reported seed replays its scene first;
// without one, it picks a starting seed of its own.
func Check(h *harness.H, newShop shelves.New, p Profile) check.Verdict {
	return Run(h, newShop, p, h.Seed(), Scenes)
}

// Run plays n scenes from the given seed (0: a seed of its own), and
// stops at the first that breaks an invariant, which it shrinks.
func Run(h *harness.H, newShop shelves.New, p Profile, seed uint64, n int) check.Verdict {
	if seed == 0 {
		seed = 1 + rand.Uint64N(1_000_000)
	}
	for i := range n {
		sc := Draw(seed+uint64(i), p)
		res := play(h, newShop, p, sc, false)
		if res.stuck != nil {
			v := shelves.Stuck(res.stuck)
			v.Message = fmt.Sprintf("scene %d (seed %d): %s", i+1, sc.Seed, v.Message)
			return v
		}
		if res.bad == "" {
			continue
		}
		small, bad := shrink(h, newShop, p, sc, res.bad)
		return check.Failed(fmt.Sprintf("scene %d of %d broke an invariant (seed %d)", i+1, n, sc.Seed), Failure{
			Bad: bad, Scene: small.String(), Kept: len(small.Visitors), From: len(sc.Visitors), Noun: "visitors",
			Replay: fmt.Sprintf("go run ./shop check %d --seed %d", p.Case, sc.Seed),
			Watch:  fmt.Sprintf("go run ./shop run %d --seed %d --timeline", p.Case, sc.Seed),
		}.String())
	}
	return check.Passed(fmt.Sprintf("%d scenes from seed %d", n, seed))
}

// shrink looks for a smaller scene that still breaks an invariant: fewer
// visitors, fewer contexts that end, earlier arrivals, fewer and cheaper
// queries that do not fail. A candidate counts when it breaks one in any
// of two plays, as some bugs need a schedule that only comes now and then.
func shrink(h *harness.H, newShop shelves.New, p Profile, sc Scene, bad string) (Scene, string) {
	return Shrink(sc, bad, candidates, func(c Scene) string { return breaks(h, newShop, p, c, 2) })
}

// breaks plays a scene up to tries times and returns the first invariant
// it breaks, or "".
func breaks(h *harness.H, newShop shelves.New, p Profile, sc Scene, tries int) string {
	for range tries {
		res := play(h, newShop, p, sc, false)
		if res.stuck != nil {
			return ""
		}
		if res.bad != "" {
			return res.bad
		}
	}
	return ""
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
	sc := Draw(seed, p)
	res := play(h, newShop, p, sc, timeline)
	shrunk := false
	if res.bad != "" && res.stuck == nil {
		small, _ := shrink(h, newShop, p, sc, res.bad)
		if again := play(h, newShop, p, small, timeline); again.bad != "" {
			sc, res, shrunk = small, again, true
		}
	}
	fmt.Fprintf(w, "The explorer's scene %d", seed)
	if shrunk {
		fmt.Fprintf(w, ", shrunk to the smallest scene that still breaks an invariant")
	}
	fmt.Fprintf(w, ": %s.\n\n", sc)
	for i, v := range sc.Visitors {
		fmt.Fprintf(w, "  %s\n", v.describe(i))
	}
	fmt.Fprintln(w)
	switch {
	case res.stuck != nil:
		fmt.Fprintf(w, "The shop never stopped running: %v\n", res.stuck)
	case res.bad != "":
		fmt.Fprintf(w, "Broken: %s.\n", res.bad)
	default:
		fmt.Fprintf(w, "Every invariant held.\n")
	}
	if timeline {
		fmt.Fprintf(w, "\nWhat happened, on the scene's clock (events a few yields apart came before the process rested):\n\n")
		for _, l := range res.lines {
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
