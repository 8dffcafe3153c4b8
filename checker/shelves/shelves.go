// Package shelves holds the checks shared by the cases whose shop serves
// shelves through Top(ctx, shelf): cases 1 to 5. Each function sets up a
// scene with gated queries, lets the visitors settle, opens the gates and
// counts.
package shelves

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"stampede/checker/check"
	"stampede/checker/harness"
	"stampede/checker/point"
	"stampede/shop/catalog"
)

// Shop is the shop of cases 1 to 5: shelves served from a cache in front of
// the catalog database.
type Shop interface {
	Top(ctx context.Context, shelf string) ([]string, error)
}

// New makes a shop in front of a database.
type New func(db *catalog.DB) Shop

// Visitors is how many visitors arrive at once in the story.
const Visitors = 50

// top returns a visit that asks the shop for a shelf.
func top(s Shop, shelf string) func(context.Context, int) ([]string, error) {
	return func(ctx context.Context, _ int) ([]string, error) { return s.Top(ctx, shelf) }
}

// Stuck turns an error from the harness into a failing verdict that says
// where the visitors are stuck.
func Stuck(err error) check.Verdict {
	v := check.Failed("", "the visitors never finished: "+err.Error())
	var st *harness.Stuck
	v.Hung = errors.As(err, &st) && st.Busy
	return v
}

// LingerCap bounds how long Linger waits for visitors asleep in a polling
// loop: five times the story's query.
const LingerCap = 5 * catalog.QueryCost

// Linger keeps the scene as it is on the real clock for the story's query
// time, catalog.QueryCost, and then waits for the process to settle again.
// A check calls it with a query held at its gate and the crowd settled, so
// that a visitor who acts on a timer shorter than the story's query (gives
// up, queries the database itself, polls a lock for a while) is seen
// acting. While a visitor is still asleep in a polling loop of the
// student's, it waits on, up to LingerCap: a loop of short sleeps counted
// in tries, each of which a loaded machine wakes late, then reaches its
// end too. It is the only real time a check spends on purpose, once per
// scene; no verdict is read from a clock: the check counts what the
// visitors did by then.
//
// Under harness.OneAtATime the schedule holds nobody while Linger waits
// (point.Loosen): a polling loop held at every try would get one try per
// turn the driver gives, fewer on a slower machine, and a loop of 24
// tries of 5 ms that gives up at its end did not reach it within the cap
// in some runs (the check passed it). Free, it runs at the machine's
// pace, as without a schedule. What runs then is woken by the visitors'
// own timers, which is what Linger is for; the gaps between statements
// are played under the schedule before and after it.
func Linger(h *harness.H) error {
	defer point.Loosen()()
	end := time.Now().Add(LingerCap)
	for pause := catalog.QueryCost; ; pause = catalog.QueryCost / 10 {
		t := time.NewTimer(pause)
		select {
		case <-t.C:
		case <-h.Context().Done():
			t.Stop()
			return h.Context().Err()
		}
		if err := h.Settled(func() bool { return true }); err != nil {
			return err
		}
		if !h.Asleep() || time.Now().After(end) {
			return nil
		}
	}
}

// finished ends a scene whose gates are open: unless err (a wait before
// it) says the visitors are stuck, it waits for them all, and fails on
// either, or on a visitor's panic.
func finished[T any](err error, crowd *harness.Crowd[T]) check.Verdict {
	if err == nil {
		err = crowd.Wait()
	}
	if err != nil {
		return Stuck(err)
	}
	if p := crowd.Panicked(); p != "" {
		return check.Failed("", "a visitor's call panicked: "+p)
	}
	return check.Passed("")
}

// Served checks that every visitor of a burst gets the database's list,
// waiting as long as the query takes, and that visitors who come after the
// burst, served from the cache, get it too. It catches waiters that give
// up and return nothing, an error or a list of their own, and hits that
// return something other than what was cached.
func Served(h *harness.H, newShop New) check.Verdict {
	gate := harness.NewGate()
	db := catalog.New(catalog.WithCost(0), catalog.WithHook(gate.Hold(catalog.Bestsellers)))
	shop := newShop(db)
	crowd := harness.Visit(h, Visitors, top(shop, catalog.Bestsellers))
	err := crowd.Settle()
	if err == nil {
		err = Linger(h)
	}
	early := crowd.Outcomes() // whoever returned while the query was held
	gate.Open()
	if err == nil {
		err = crowd.Wait()
	}
	if err != nil {
		return Stuck(err)
	}
	for i, o := range early {
		if o.Returned && o.Panic == "" {
			return check.Failed(fmt.Sprintf("%d of %d gave up", returned(early), Visitors), fmt.Sprintf(
				"visitor %d stopped waiting while the query was still running and returned %q, error %v: "+
					"the story's query takes %.1f s, and a waiter must wait for it however long it takes",
				i+1, o.Value, o.Err, catalog.QueryCost.Seconds()))
		}
	}
	v := AllGot(crowd.Outcomes(), catalog.Books(catalog.Bestsellers))
	if !v.Pass {
		return v
	}
	return after(v, Later(h, shop, db, catalog.Bestsellers))
}

// returned counts the outcomes of visitors who have returned.
func returned(outs []harness.Outcome[[]string]) int {
	n := 0
	for _, o := range outs {
		if o.Returned {
			n++
		}
	}
	return n
}

// LaterVisitors is how many visitors per shelf Later sends.
const LaterVisitors = 10

// Later sends visitors for the given shelves after their bursts were
// served, all at once, and checks that each gets its shelf's list from the
// cache: the database answers no more queries. It catches code that
// coalesces a burst but never fills the cache, and hits that return
// something other than the database's list (an empty copy, a result never
// set).
func Later(h *harness.H, shop Shop, db *catalog.DB, shelves ...string) check.Verdict {
	before := db.TotalQueries()
	crowd := harness.Visit(h, LaterVisitors*len(shelves), func(ctx context.Context, i int) ([]string, error) {
		return shop.Top(ctx, shelves[i%len(shelves)])
	})
	if err := crowd.Wait(); err != nil {
		return Stuck(err)
	}
	for i, o := range crowd.Outcomes() {
		shelf := shelves[i%len(shelves)]
		if v := AllGot([]harness.Outcome[[]string]{o}, Want(shelf)); !v.Pass {
			return check.Failed("", fmt.Sprintf("after the burst was served, a later visitor for %s: %s",
				shelf, strings.Replace(v.Message, "visitor 1", "the visitor", 1)))
		}
	}
	if more := db.TotalQueries() - before; more > 0 {
		return check.Failed(fmt.Sprintf("%d more queries", more), fmt.Sprintf(
			"after the burst was served, %d later visitors came and the database answered %d more queries: "+
				"the list must be kept in the cache once it has been fetched", LaterVisitors*len(shelves), more))
	}
	return check.Passed(fmt.Sprintf("%d later visitors served from the cache", LaterVisitors*len(shelves)))
}

// AllGot checks that every outcome is the want list, and says what the
// first wrong one got.
func AllGot(outs []harness.Outcome[[]string], want []string) check.Verdict {
	good, first := 0, ""
	for i, o := range outs {
		switch {
		case o.Panic != "":
			first = cmp(first, fmt.Sprintf("visitor %d's call panicked: %s", i+1, o.Panic))
		case o.Err != nil:
			first = cmp(first, fmt.Sprintf("visitor %d got an error: %v", i+1, o.Err))
		case !slices.Equal(o.Value, want):
			first = cmp(first, fmt.Sprintf("visitor %d got %q, not the database's list", i+1, o.Value))
		default:
			good++
		}
	}
	figure := fmt.Sprintf("%d of %d", good, len(outs))
	if good < len(outs) {
		return check.Failed(figure, first)
	}
	return check.Passed(figure)
}

func cmp(first, s string) string {
	if first != "" {
		return first
	}
	return s
}

// QueriedOnce checks that a burst of visitors makes one query, however
// long it takes, and that visitors who come after it are served from the
// cache. It catches the stampede itself (one query per visitor), the lock
// without a second look (the waiters query one after another), waiters who
// give up on a timer and query the database themselves, and code that
// coalesces the burst but never fills the cache.
func QueriedOnce(h *harness.H, newShop New) check.Verdict {
	gate := harness.NewGate()
	db := catalog.New(catalog.WithCost(0), catalog.WithHook(gate.Hold(catalog.Bestsellers)))
	shop := newShop(db)
	crowd := harness.Visit(h, Visitors, top(shop, catalog.Bestsellers))
	err := crowd.Settle()
	together := db.Queries(catalog.Bestsellers) // in the database at once, before the gate opens
	if err == nil {
		err = Linger(h)
	}
	lingered := db.Queries(catalog.Bestsellers) // and once the query had run for its story time
	gate.Open()
	if err == nil {
		err = crowd.Wait()
	}
	if err != nil {
		return Stuck(err)
	}
	n := db.Queries(catalog.Bestsellers)
	v := once(n, crowd.Panicked())
	switch {
	case n > 1 && lingered > together:
		v.Message += fmt.Sprintf(": %d visitors stopped waiting while the first query ran and asked the database themselves "+
			"(the story's query takes %.1f s; a waiter must wait for it, however long it takes)", lingered-together, catalog.QueryCost.Seconds())
	case n > 1 && together == 1:
		v.Message += ", one after another: the lock works, but each waiter queries again once it has the lock (look at the cache again under the lock)"
	}
	if !v.Pass {
		return v
	}
	return after(v, Later(h, shop, db, catalog.Bestsellers))
}

// after returns v, or later when later failed.
func after(v, later check.Verdict) check.Verdict {
	if !later.Pass {
		return later
	}
	return v
}

func once(n int, panicked string) check.Verdict {
	figure := fmt.Sprintf("ran %d", n)
	switch {
	case panicked != "":
		return check.Failed(figure, "a visitor's call panicked: "+panicked)
	case n == 0:
		return check.Failed(figure, "the list must come from the database, once")
	case n > 1:
		return check.Failed(figure, fmt.Sprintf("%d visitors asked for the same shelf and the database answered it %d times", Visitors, n))
	}
	return check.Passed(figure)
}

// PerShelf is how many visitors EachShelfOnce sends for each shelf.
const PerShelf = 3

// EachShelfOnce checks that with every shelf of the shop asked for at
// once, each shelf is queried once and each visitor gets its own shelf's
// list, then and from the cache afterwards. It catches single-flight that
// forgets the key (one flight for every shelf, whose waiters then get the
// wrong list or query again), a table of flights or locks with fewer slots
// than shelves (a slot per name length, a hash modulo a small number: the
// shop's sixteen shelves share slots under any such table with fewer than
// sixteen), and a lock per key that still stampedes.
//
// The shelves' queries are held at separate gates for the story's query
// time (Linger), then opened one at a time with the process settled in
// between, so that the verdict does not depend on which shelf's query
// finishes first, nor on how long the machine took to get there: a
// waiter that queries or gives up on a timer shorter than the query does
// so in every run.
func EachShelfOnce(h *harness.H, newShop New) check.Verdict {
	names := Wide()
	gates := make(map[string]*harness.Gate, len(names))
	for _, name := range names {
		gates[name] = harness.NewGate()
	}
	db := catalog.New(catalog.WithCost(0), catalog.WithHook(func(ctx context.Context, shelf string) error {
		return gates[shelf].Wait(ctx)
	}))
	shop := newShop(db)
	Open(db)
	crowd := harness.Visit(h, PerShelf*len(names), func(ctx context.Context, i int) ([]string, error) {
		return shop.Top(ctx, names[i%len(names)])
	})
	err := crowd.Settle()
	if err == nil {
		// The queries take the story's time before the first answers, so
		// that a waiter on a timer of its own acts here in every run, not
		// only when the machine is slow.
		err = Linger(h)
	}
	for _, name := range names {
		if err != nil {
			break
		}
		gates[name].Open()
		err = h.Settled(func() bool { return true })
	}
	for _, g := range gates {
		g.Open()
	}
	if v := finished(err, crowd); !v.Pass {
		return v
	}
	for i, o := range crowd.Outcomes() {
		if want := Want(names[i%len(names)]); o.Err != nil || !slices.Equal(o.Value, want) {
			return check.Failed("", fmt.Sprintf("%d shelves asked for at once: a visitor who asked for %s got %q (error: %v)",
				len(names), names[i%len(names)], o.Value, o.Err))
		}
	}
	var wrong []string
	counts := map[int]bool{}
	for _, name := range names {
		q := db.Queries(name)
		counts[q] = true
		if q != 1 {
			wrong = append(wrong, fmt.Sprintf("%s %d", name, q))
		}
	}
	if len(wrong) > 0 {
		queries := "queries: " + strings.Join(wrong[:min(len(wrong), 4)], ", ")
		switch {
		case len(wrong) == len(names) && len(counts) == 1:
			queries = "every shelf was queried " + strings.TrimPrefix(wrong[0], names[0]+" ") + " times"
		case len(wrong) > 4:
			queries += ", ..."
		}
		return check.Failed(fmt.Sprintf("%d of %d shelves not queried once", len(wrong), len(names)), fmt.Sprintf(
			"%d visitors asked for %d shelves at once, %d for each, and each shelf should be queried exactly once; %s",
			PerShelf*len(names), len(names), PerShelf, queries))
	}
	v := check.Passed(fmt.Sprintf("%d shelves, each queried once", len(names)))
	return after(v, Later(h, shop, db, names...))
}

// Apart checks that no visitor is held behind another shelf's slow query,
// for every pair of the shop's shelves. It catches one lock for the whole
// shop, and locks shared by shelves: striped locks (a hash of the name
// modulo a small number), or a slot per name length.
//
// One visitor comes for each of the sixteen shelves at once, and every
// query is held at the gate. Once the process has settled, each visitor
// must have reached its own query: a visitor that has neither reached it
// nor returned waits behind another shelf's query, since nothing else is
// running. Two shelves that share a lock held across the query cannot both
// reach their queries, whichever comes first, so one scene tries every
// pair. The scene ends by failing every held query, not by letting them
// fill the cache at once: the verdict is already known, and sixteen fills
// side by side would crash a shop whose map has no guard (case 4 as
// shipped) in some runs and not others.
func Apart(h *harness.H, newShop New) check.Verdict {
	names := Wide()
	gate := harness.NewGate()
	var over atomic.Bool
	db := catalog.New(catalog.WithCost(0), catalog.WithHook(func(ctx context.Context, _ string) error {
		if err := gate.Wait(ctx); err != nil {
			return err
		}
		if over.Load() {
			return errSceneOver
		}
		return nil
	}))
	shop := newShop(db)
	Open(db)
	crowd := harness.Visit(h, len(names), func(ctx context.Context, i int) ([]string, error) {
		return shop.Top(ctx, names[i])
	})
	defer func() {
		over.Store(true)
		gate.Open()
		_ = crowd.Wait()
	}()
	if err := crowd.Settle(); err != nil {
		return Stuck(err)
	}
	if p := crowd.Panicked(); p != "" {
		return check.Failed("", "a visitor's call panicked: "+p)
	}
	var waiting []string
	waits := map[int]bool{}
	for i, o := range crowd.Outcomes() {
		if !o.Returned && db.Queries(names[i]) == 0 {
			waiting = append(waiting, names[i])
			waits[i] = true
		}
	}
	if len(waiting) == 0 {
		return check.Passed(fmt.Sprintf("%d shelves at once, each reached its own query", len(names)))
	}
	who := "the visitor for " + strings.Join(waiting, " and ")
	if len(waiting) > 2 {
		who = fmt.Sprintf("the visitors for %d of them (%s, ...)", len(waiting), strings.Join(waiting[:2], ", "))
	}
	return check.Failed(fmt.Sprintf("%d of %d held behind another shelf", len(waiting), len(names)), fmt.Sprintf(
		"%d visitors asked for %d shelves at once, and while the first queries ran, %s waited and never reached the database: %s "+
			"(shelves that share a lock or a slot wait for each other's queries)",
		len(names), len(names), who, crowd.WhereOf(func(i int) bool { return waits[i] })))
}

// storyFirst puts the story's shelves first, so that a failure names the
// shelves the student knows when it can.
func storyFirst(names []string) []string {
	story := []string{catalog.Bestsellers, catalog.NewReleases, catalog.StaffPicks}
	rest := slices.DeleteFunc(slices.Clone(names), func(n string) bool { return slices.Contains(story, n) })
	return append(story, rest...)
}

// errSceneOver ends the queries that Apart held, once it has seen what it
// came to see.
var errSceneOver = errors.New("catalog: connection closed")

// Busy runs visitors on several shelves at once so that the race
// detector sees every access to the shop's shared state. Its verdict is the
// race detector's; it fails here only if the visitors hang or panic.
//
// Each round has two scenes. A cold burst: visitors on three shelves miss
// together, so that the first looks, the lock table and the fills all
// meet. Then warm readers: visitors read a filled shelf over and over while
// one visitor fills another, so that a read taken without a lock overlaps
// a write into the same map. A last scene makes some queries fail while
// the others succeed (see Failing), so that the error path runs under the
// race detector too.
func Busy(h *harness.H, newShop New) check.Verdict {
	shelves := []string{catalog.Bestsellers, catalog.NewReleases, catalog.StaffPicks}
	for round := range 4 {
		shop := newShop(catalog.New(catalog.WithCost(0)))
		cold := harness.Visit(h, Visitors, func(ctx context.Context, i int) ([]string, error) {
			return shop.Top(ctx, shelves[(i+round)%len(shelves)])
		})
		if v, bad := ended(cold); bad {
			return v
		}

		shop = newShop(catalog.New(catalog.WithCost(0)))
		warm, filled := shelves[round%len(shelves)], shelves[(round+1)%len(shelves)]
		if v, bad := ended(harness.Visit(h, 1, top(shop, warm))); bad {
			return v
		}
		const readers, reads = 8, 100
		mixed := harness.Visit(h, readers+1, func(ctx context.Context, i int) ([]string, error) {
			if i == readers {
				return shop.Top(ctx, filled)
			}
			var books []string
			for range reads {
				var err error
				if books, err = shop.Top(ctx, warm); err != nil {
					return nil, err
				}
			}
			return books, nil
		})
		if v, bad := ended(mixed); bad {
			return v
		}
	}
	return Failing(h, newShop, Faults{})
}

// Faults says how hard Failing fails the database.
type Faults struct {
	// Crowds sends several visitors to each failing shelf, so that the
	// failure reaches waiters. Without it each failing shelf has one
	// visitor: the cases before 5 need not share a failure, only survive it.
	Crowds bool
	// Panics makes some shelves' queries panic instead of failing.
	Panics bool
}

// errFailing is the error of the shelves that Failing fails.
var errFailing = errors.New("catalog: connection reset")

// Failing runs the race detector's workload with a database that fails:
// one shelf in four returns an error (and, with f.Panics, another one in
// four panics) while the other shelves are served, all at once on one shop;
// then, with f.Crowds, the database recovers and visitors come for every
// shelf again. A
// race on the error path, such as a field written when a query fails, is
// seen as on any other. Its verdict is the race detector's; it fails here
// only if the visitors hang, or panic on a shelf whose query did not.
func Failing(h *harness.H, newShop New, f Faults) check.Verdict {
	names := append(catalog.Shelves(), addedNames()...)
	var down atomic.Bool
	down.Store(true)
	fails := func(i int) bool { return i%4 == 1 || i%4 == 3 && !f.Panics }
	panics := func(i int) bool { return i%4 == 3 && f.Panics }
	db := catalog.New(catalog.WithCost(0), catalog.WithHook(func(_ context.Context, shelf string) error {
		i := slices.Index(names, shelf)
		switch {
		case !down.Load():
		case fails(i):
			return errFailing
		case panics(i):
			panic("catalog driver: connection pool closed")
		}
		return nil
	}))
	shop := newShop(db)
	Open(db)
	var visits []int // shelf index of each visitor
	for i := range names {
		n := 3
		if (fails(i) || panics(i)) && !f.Crowds {
			n = 1
		}
		for range n {
			visits = append(visits, i)
		}
	}
	crowd := harness.Visit(h, len(visits), func(ctx context.Context, v int) ([]string, error) {
		return shop.Top(ctx, names[visits[v]])
	})
	if err := crowd.Wait(); err != nil {
		var st *harness.Stuck
		if errors.As(err, &st) && !st.Busy {
			// A lock or a flight that a failure leaves behind is not a
			// race: the checks of failures (case 5) name it. What ran is
			// the race detector's to judge.
			return check.Passed("")
		}
		return check.Failed("", "with some queries failing: "+Stuck(err).Message)
	}
	for v, o := range crowd.Outcomes() {
		if o.Panic != "" && !panics(visits[v]) {
			return check.Failed("", fmt.Sprintf("with some queries failing, a visitor for %s panicked: %s", names[visits[v]], o.Panic))
		}
	}
	if !f.Crowds {
		return check.Passed("") // surviving a failure is case 5's lesson
	}
	down.Store(false)
	again := harness.Visit(h, 2*len(names), func(ctx context.Context, i int) ([]string, error) {
		return shop.Top(ctx, names[i%len(names)])
	})
	if err := again.Wait(); err != nil {
		var st *harness.Stuck
		if errors.As(err, &st) && !st.Busy {
			return check.Passed("")
		}
		return check.Failed("", "after some queries had failed, the next visitors: "+Stuck(err).Message)
	}
	if p := again.Panicked(); p != "" {
		return check.Failed("", "after some queries had failed, a visitor's call panicked: "+p)
	}
	return check.Passed("")
}

// ended waits for a crowd and turns a hang or a panic into a failure.
func ended(c *harness.Crowd[[]string]) (check.Verdict, bool) {
	if err := c.Wait(); err != nil {
		return Stuck(err), true
	}
	if p := c.Panicked(); p != "" {
		return check.Failed("", "a visitor's call panicked: "+p), true
	}
	return check.Verdict{}, false
}
