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

	"stampede/checker/check"
	"stampede/checker/harness"
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

// Burst starts n visitors for one shelf on a fresh shop whose database
// holds every query of that shelf at a gate. It waits until they have
// settled, opens the gate, and waits until they have all returned.
func Burst(h *harness.H, newShop New, n int, shelf string) (*catalog.DB, *harness.Crowd[[]string], error) {
	gate := harness.NewGate()
	db := catalog.New(catalog.WithCost(0), catalog.WithHook(gate.Hold(shelf)))
	crowd := harness.Visit(h, n, top(newShop(db), shelf))
	if err := crowd.Settle(); err != nil {
		gate.Open()
		return db, crowd, err
	}
	gate.Open()
	return db, crowd, crowd.Wait()
}

// Stuck turns an error from the harness into a failing verdict that says
// where the visitors are stuck.
func Stuck(err error) check.Verdict {
	v := check.Failed("", "the visitors never finished: "+err.Error())
	var st *harness.Stuck
	v.Hung = errors.As(err, &st) && st.Busy
	return v
}

// Served checks that every visitor of a burst gets the database's list.
// It catches waiters that return nothing, an error, or a list of their own.
func Served(h *harness.H, newShop New) check.Verdict {
	_, crowd, err := Burst(h, newShop, Visitors, catalog.Bestsellers)
	if err != nil {
		return Stuck(err)
	}
	return AllGot(crowd.Outcomes(), catalog.Books(catalog.Bestsellers))
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

// QueriedOnce checks that a burst of visitors makes one query. It catches
// the stampede itself (one query per visitor) and the lock without a second
// look (the waiters query one after another).
func QueriedOnce(h *harness.H, newShop New) check.Verdict {
	gate := harness.NewGate()
	db := catalog.New(catalog.WithCost(0), catalog.WithHook(gate.Hold(catalog.Bestsellers)))
	crowd := harness.Visit(h, Visitors, top(newShop(db), catalog.Bestsellers))
	err := crowd.Settle()
	together := db.Queries(catalog.Bestsellers) // in the database at once, before the gate opens
	gate.Open()
	if err == nil {
		err = crowd.Wait()
	}
	if err != nil {
		return Stuck(err)
	}
	n := db.Queries(catalog.Bestsellers)
	v := once(n, crowd.Panicked())
	if n > 1 && together == 1 {
		v.Message += ", one after another: the lock works, but each waiter queries again once it has the lock (look at the cache again under the lock)"
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

// EachShelfOnce checks that with two shelves asked for at once, each shelf
// is queried once. It catches single-flight that forgets the key (one
// flight for every shelf, whose waiters then get the wrong list or query
// again) and a lock per key that still stampedes.
//
// The shelves' queries are held at separate gates, opened one at a time
// with the process settled in between, so that the verdict does not depend
// on which shelf's query finishes first.
func EachShelfOnce(h *harness.H, newShop New) check.Verdict {
	shelves := []string{catalog.Bestsellers, catalog.NewReleases}
	gates := []*harness.Gate{harness.NewGate(), harness.NewGate()}
	db := catalog.New(catalog.WithCost(0), catalog.WithHook(func(ctx context.Context, shelf string) error {
		return gates[slices.Index(shelves, shelf)].Wait(ctx)
	}))
	shop := newShop(db)
	crowd := harness.Visit(h, Visitors, func(ctx context.Context, i int) ([]string, error) {
		return shop.Top(ctx, shelves[i%2])
	})
	err := crowd.Settle()
	if err == nil {
		gates[0].Open()
		err = h.Settled(func() bool { return true })
	}
	gates[0].Open()
	gates[1].Open()
	if err == nil {
		err = crowd.Wait()
	}
	if err != nil {
		return Stuck(err)
	}
	b, n := db.Queries(shelves[0]), db.Queries(shelves[1])
	figure := fmt.Sprintf("bestsellers %d, new releases %d", b, n)
	if p := crowd.Panicked(); p != "" {
		return check.Failed(figure, "a visitor's call panicked: "+p)
	}
	for i, o := range crowd.Outcomes() {
		if want := catalog.Books(shelves[i%2]); o.Err != nil || !slices.Equal(o.Value, want) {
			return check.Failed(figure, fmt.Sprintf("a visitor who asked for %s got %q (error: %v)", shelves[i%2], o.Value, o.Err))
		}
	}
	if b != 1 || n != 1 {
		return check.Failed(figure, "each shelf should be queried exactly once")
	}
	return check.Passed(figure)
}

// Apart checks that a visitor for one shelf is not held behind another
// shelf's slow query. It catches one lock for the whole shop.
func Apart(h *harness.H, newShop New) check.Verdict {
	gate := harness.NewGate()
	db := catalog.New(catalog.WithCost(0), catalog.WithHook(gate.Hold(catalog.Bestsellers)))
	shop := newShop(db)
	slow := harness.Visit(h, 10, top(shop, catalog.Bestsellers))
	defer func() { gate.Open(); _ = slow.Wait() }()
	if err := slow.Settle(); err != nil {
		return Stuck(err)
	}
	if p := slow.Panicked(); p != "" {
		return check.Failed("", "a visitor's call panicked: "+p)
	}
	if db.Queries(catalog.Bestsellers) == 0 {
		return check.Failed("", "the bestseller visitors never reached the database: "+slow.Where())
	}
	// One visitor for the other shelf while the bestseller query is held.
	fresh := harness.Visit(h, 1, top(shop, catalog.NewReleases))
	if err := fresh.Settle(); err != nil {
		return Stuck(err)
	}
	if !fresh.Done() {
		where := fresh.Where()
		gate.Open()
		_ = fresh.Wait()
		return check.Failed("held behind the bestseller query", "the new-releases visitor waited for the bestseller query: "+where)
	}
	if v := AllGot(fresh.Outcomes(), catalog.Books(catalog.NewReleases)); !v.Pass {
		return v
	}
	return check.Passed("served while the bestseller query ran")
}

// Busy runs visitors on several shelves at once so that the race
// detector sees every access to the shop's shared state. Its verdict is the
// race detector's; it fails here only if the visitors hang or panic.
//
// Each round has two scenes. A cold burst: visitors on three shelves miss
// together, so that the first looks, the lock table and the fills all
// meet. Then warm readers: visitors read a filled shelf over and over while
// one visitor fills another, so that a read taken without a lock overlaps
// a write into the same map.
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
