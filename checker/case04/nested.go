package case04

import (
	"context"
	"fmt"
	"runtime"
	"sync"

	"stampede/checker/check"
	"stampede/checker/harness"
	"stampede/checker/shelves"
	"stampede/shop/catalog"
)

// nestedInfo describes the nested read lock check. It lives here, not in
// Case's literal, so that the list of checks names it in one line.
var nestedInfo = check.Info{
	ID:   "rlock-once",
	Name: "a hit takes each read lock once: a writer queued during a hit does not deadlock it",
	Catches: "a read lock taken again by the goroutine that holds it (RLock, then a helper that calls RLock): " +
		"once a writer is waiting, the second RLock waits for the writer, and the writer for the first",
}

// nestedRounds is how many times the scene is played on each RWMutex. One
// round decides it; the others cover an operating-system stall of the
// writer's thread in the microseconds between its Unlock and its Lock.
const nestedRounds = 3

// NestedRLock checks that a hit does not read-lock an RWMutex it already
// holds. No timing decides it: with one processor, the order of the
// scheduler's run queue puts a writer between a hit's two read locks.
//
// For each sync.RWMutex in the shop, with every shelf filled: the checker
// holds it for reading, queues a writer behind that, and sends hits, which
// park in their first RLock. Then it lets go. The writer gets the lock and
// releases it, which admits the parked hits as readers and makes them
// runnable, and, before any of them has run, it asks for the lock again:
// it now waits for the hits. A hit that takes one read lock reads and
// releases it, and everyone finishes. A hit that asks for a second read
// lock waits behind the writer, which waits for the hit: deadlock.
func NestedRLock(h *harness.H, newShop shelves.New) check.Verdict {
	shop := newShop(catalog.New(catalog.WithCost(0)))
	for _, shelf := range allShelves {
		if v := fill(h, shop, shelf); !v.Pass {
			return check.Failed("", "filling the shelves first: "+v.Message)
		}
	}
	if err := h.Settled(func() bool { return true }); err != nil {
		return shelves.Stuck(err)
	}
	locks := holdLocks(shop)
	rws := locks.rw
	locks.releaseAll()
	if len(rws) == 0 {
		return check.Passed("no sync.RWMutex to queue a writer on")
	}

	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	for range nestedRounds {
		for _, m := range rws {
			if v := writerBetween(h, shop, m); !v.Pass {
				return v
			}
		}
	}
	return check.Passed(fmt.Sprintf("%d RWMutex(es), %d rounds", len(rws), nestedRounds))
}

// writerBetween plays the scene once on m. It must run with one processor.
func writerBetween(h *harness.H, shop shelves.Shop, m *sync.RWMutex) check.Verdict {
	m.RLock()
	released := false
	defer func() {
		if !released {
			m.RUnlock()
		}
	}()
	writer := harness.Visit(h, 1, func(context.Context, int) (struct{}, error) {
		m.Lock()
		m.Unlock()
		// No call in between may yield: the readers just admitted must
		// not run before the writer queues again.
		m.Lock()
		m.Unlock()
		return struct{}{}, nil
	})
	if err := writer.Settle(); err != nil {
		return shelves.Stuck(err)
	}
	hits := harness.Visit(h, len(allShelves), func(ctx context.Context, i int) ([]string, error) {
		return shop.Top(ctx, allShelves[i])
	})
	if err := hits.Settle(); err != nil {
		return shelves.Stuck(err)
	}
	m.RUnlock()
	released = true
	if err := hits.Wait(); err != nil {
		return check.Failed("deadlocked", "a writer queued while a hit held a read lock, and the hit asked for a read lock "+
			"again: "+err.Error()+". A goroutine must not read-lock an RWMutex it already holds: a waiting writer stops "+
			"new readers, the hit's second RLock waits for the writer, and the writer for the hit's first. Take the "+
			"lock once, and call helpers that expect it held")
	}
	if err := writer.Wait(); err != nil {
		return shelves.Stuck(err)
	}
	for i, o := range hits.Outcomes() {
		if v := shelves.AllGot([]harness.Outcome[[]string]{o}, catalog.Books(allShelves[i])); !v.Pass {
			return v
		}
	}
	return check.Passed("")
}
