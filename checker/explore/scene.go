// Package explore is the lab's second layer of checks: instead of one
// hand-built scene, it plays hundreds of small random scenes against a
// shop whose interface is Top(ctx, shelf) (cases 1 to 5) and holds every
// one of them to invariants that any correct answer keeps under any
// schedule. A scene that breaks one is shrunk to the smallest scene that
// still breaks it, and reported with its seed and a one-line story.
//
// Time in a scene is virtual. The database's queries sleep on a fake
// clock, the visitors arrive on it, and their contexts end on it; the
// driver moves the clock only when the process is at rest (every goroutine
// parked), so everything that can happen at one instant happens before the
// next. Events less than a microsecond apart are the exception: they are
// released a few scheduler yields apart without waiting for rest, which
// is how a scene stages a visitor who arrives just as a fill lands. No
// verdict depends on how long anything took.
package explore

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"stampede/shop/catalog"
)

// Fault is what a query does besides taking its time.
type Fault int

// The faults a query can have.
const (
	Works  Fault = iota // returns the shelf's books
	Fails               // returns an error of its own
	Panics              // panics
)

// Plan is what one query of a shelf does: the k-th query of a shelf
// follows the shelf's k-th plan, and queries past the last plan work and
// cost a millisecond.
type Plan struct {
	Cost  time.Duration
	Fault Fault
}

// Visitor is one visitor of a scene.
type Visitor struct {
	Shelf string
	At    time.Duration // when the visitor asks, on the scene's clock
	// Leave is when the visitor's context ends, or 0 for never.
	Leave time.Duration
	// Deadline says the context ends as a deadline (DeadlineExceeded),
	// not a cancellation.
	Deadline bool
}

// Scene is one random scene: who asks for which shelf when, and what the
// database's queries do.
type Scene struct {
	Seed     uint64
	Visitors []Visitor
	Plans    map[string][]Plan // shelf -> its queries' plans, in order
}

// Profile is what a case's scenes may contain and which of the
// invariants that depend on the case apply.
type Profile struct {
	// Case is the case's number, for the replay commands in a failure.
	Case int
	// Faults lets queries fail or panic.
	Faults bool
	// Leave lets visitors give up: contexts cancelled, or past their
	// deadline.
	Leave bool
	// Apart says which waiting visitors must not be held by another
	// shelf's query.
	Apart Apart
}

// Apart names the visitors that may not wait, at rest, unless their own
// shelf's query is in the database.
type Apart int

// The kinds of Apart.
const (
	ApartNone Apart = iota // no such promise (the case does not check it)
	ApartHits              // a visitor whose shelf is already cached
	ApartAll               // every visitor
)

// The profiles of cases 1 to 5. Cases 1 to 4 are about a database that
// always answers: their chapters promise nothing about failures or
// visitors who give up, so their scenes have neither. Case 5 is about
// exactly those.
var (
	Case1 = Profile{Case: 1, Apart: ApartAll}
	Case2 = Profile{Case: 2, Apart: ApartAll}
	Case3 = Profile{Case: 3, Apart: ApartNone}
	Case4 = Profile{Case: 4, Apart: ApartHits}
	Case5 = Profile{Case: 5, Faults: true, Leave: true}
)

// ms is the scene's unit of time.
const ms = time.Millisecond

// allShelves are the database's shelves.
var allShelves = []string{catalog.Bestsellers, catalog.NewReleases, catalog.StaffPicks}

// Draw returns the scene of a seed.
func Draw(seed uint64, p Profile) Scene {
	r := rand.New(rand.NewPCG(seed, 0x5ce11e))
	sc := Scene{Seed: seed, Plans: map[string][]Plan{}}

	shelves := slices.Clone(allShelves)
	r.Shuffle(len(shelves), func(i, j int) { shelves[i], shelves[j] = shelves[j], shelves[i] })
	shelves = shelves[:1+Pick(r, 40, 40, 20)]

	for _, s := range shelves {
		n := 1 + r.IntN(3)
		for range n {
			pl := Plan{Cost: []time.Duration{0, 1 * ms, 2 * ms, 3 * ms, 5 * ms}[r.IntN(5)]}
			if p.Faults {
				pl.Fault = Fault(Pick(r, 55, 30, 15))
			}
			sc.Plans[s] = append(sc.Plans[s], pl)
		}
	}

	n := 1 + r.IntN(9)
	pattern := r.IntN(4)
	waves := []time.Duration{0, time.Duration(1+r.IntN(6)) * ms, time.Duration(4+r.IntN(8)) * ms}
	for i := range n {
		v := Visitor{Shelf: shelves[r.IntN(len(shelves))]}
		switch pattern {
		case 0: // a burst, with a straggler now and then
			if r.IntN(5) == 0 {
				v.At = time.Duration(r.IntN(8)) * ms
			}
		case 1: // waves
			v.At = waves[r.IntN(len(waves))]
		case 2: // steady arrivals across the fills
			v.At = time.Duration(i) * time.Duration(1+r.IntN(2)) * ms
		default: // anything
			v.At = time.Duration(r.IntN(12)) * ms
		}
		// Just after an instant: a few scheduler yields later, before the
		// process has come to rest. Fills land on whole milliseconds.
		if v.At > 0 && r.IntN(3) == 0 {
			v.At += time.Duration(1 + r.IntN(5))
		}
		if p.Leave && r.IntN(3) == 0 {
			v.Leave = v.At + time.Duration(r.IntN(5))*ms + time.Duration(r.IntN(2))*time.Duration(1+r.IntN(3))
			if v.Leave == 0 {
				v.Leave = 1 // "at once": a context that ends as the visitor arrives
			}
			v.Deadline = r.IntN(2) == 0
		}
		sc.Visitors = append(sc.Visitors, v)
	}
	return sc
}

// Pick draws an index with the given weights, for a case's scene: index i
// with a chance of weights[i] in their sum.
func Pick(r *rand.Rand, weights ...int) int {
	total := 0
	for _, w := range weights {
		total += w
	}
	x := r.IntN(total)
	for i, w := range weights {
		if x < w {
			return i
		}
		x -= w
	}
	return len(weights) - 1
}

// plan returns the plan of a shelf's k-th query (from 0).
func (sc Scene) plan(shelf string, k int) Plan {
	if ps := sc.Plans[shelf]; k < len(ps) {
		return ps[k]
	}
	return Plan{Cost: ms}
}

// clone returns a deep copy of the scene.
func (sc Scene) clone() Scene {
	c := Scene{Seed: sc.Seed, Visitors: slices.Clone(sc.Visitors), Plans: map[string][]Plan{}}
	for s, ps := range sc.Plans {
		c.Plans[s] = slices.Clone(ps)
	}
	return c
}

// String describes the scene in a line or two.
func (sc Scene) String() string {
	var b strings.Builder
	noun := "visitors"
	if len(sc.Visitors) == 1 {
		noun = "visitor"
	}
	var vs []string
	for i, v := range sc.Visitors {
		vs = append(vs, v.short(i))
	}
	fmt.Fprintf(&b, "%d %s (%s)", len(sc.Visitors), noun, strings.Join(vs, "; "))
	var parts []string
	for _, s := range allShelves {
		ps, ok := sc.Plans[s]
		if !ok {
			continue
		}
		var qs []string
		for _, p := range ps {
			qs = append(qs, p.String())
		}
		parts = append(parts, fmt.Sprintf("%s queries %s", s, strings.Join(qs, ", then ")))
	}
	if len(parts) > 0 {
		b.WriteString("; " + strings.Join(parts, "; "))
	}
	return b.String()
}

// String says what a plan does: "3 ms", "2 ms and fail", "0 ms and panic".
func (p Plan) String() string {
	s := at(p.Cost)
	switch p.Fault {
	case Fails:
		s += " and fail"
	case Panics:
		s += " and panic"
	}
	return s
}

// at writes a time of the scene: "3 ms", "3 ms + 2 yields".
func at(d time.Duration) string {
	whole, rest := d/ms*ms, d%ms
	s := fmt.Sprintf("%d ms", whole/ms)
	switch {
	case rest == 1:
		s += " + 1 yield"
	case rest > 1:
		s += fmt.Sprintf(" + %d yields", rest)
	}
	return s
}

// describe says what a visitor does, for the story.
func (v Visitor) describe(i int) string {
	s := fmt.Sprintf("visitor %d asks for %s at %s", i+1, v.Shelf, at(v.At))
	if v.Leave > 0 {
		how := "gives up (cancel)"
		if v.Deadline {
			how = "reaches its deadline"
		}
		s += fmt.Sprintf(" and %s at %s", how, at(v.Leave))
	}
	return s
}

// short says what a visitor does in a few words: "2: bestsellers at 1 ms,
// cancelled at 3 ms".
func (v Visitor) short(i int) string {
	s := fmt.Sprintf("%d: %s at %s", i+1, v.Shelf, at(v.At))
	if v.Leave > 0 {
		how := "cancelled"
		if v.Deadline {
			how = "deadline"
		}
		s += fmt.Sprintf(", %s at %s", how, at(v.Leave))
	}
	return s
}
