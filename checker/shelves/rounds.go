package shelves

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"stampede/checker/check"
	"stampede/checker/harness"
	"stampede/shop/catalog"
)

// turnstile is a catalog hook that holds every query at the gate of the
// current round, until the checker lets the round through and starts the
// next one.
type turnstile struct {
	mu   sync.Mutex
	gate *harness.Gate
	held int  // queries that reached the current gate
	open bool // no more rounds: every query passes
}

func newTurnstile() *turnstile { return &turnstile{gate: harness.NewGate()} }

func (t *turnstile) hold(ctx context.Context, _ string) error {
	t.mu.Lock()
	if t.open {
		t.mu.Unlock()
		return nil
	}
	g := t.gate
	t.held++
	t.mu.Unlock()
	return g.Wait(ctx)
}

// waiting says how many queries wait at the current round's gate.
func (t *turnstile) waiting() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.held
}

// next lets the current round's queries through, starts a new round, and
// says how many queries the round held.
func (t *turnstile) next() int {
	t.mu.Lock()
	g, n := t.gate, t.held
	t.gate, t.held = harness.NewGate(), 0
	t.mu.Unlock()
	g.Open()
	return n
}

// release lets every query through, now and later.
func (t *turnstile) release() {
	t.mu.Lock()
	t.open = true
	g := t.gate
	t.mu.Unlock()
	g.Open()
}

// OneRound checks that a burst of visitors is served by one round of
// queries: the burst ends in one query's time, not one per visitor. It
// catches the per-key lock without a second look, whose waiters query one
// after another, each once the one before has answered: fifty rounds,
// fifty times the wait.
//
// Time here is counted, not measured. Every query is held at the gate of
// the current round; once the process has settled, the checker lets that
// round through and counts it, and goes on until a round holds no query.
// A stampede, all of whose queries start together, is one round: the
// "once" check is the one that fails it. A visitor asleep in a polling
// loop of its own when the first round has settled is given the story's
// time (Linger) before that round goes through, so that a poller that
// gives up and queries on its own timer does so in every run, not only
// when a loaded machine makes the round last that long.
func OneRound(h *harness.H, newShop New) check.Verdict {
	t := newTurnstile()
	db := catalog.New(catalog.WithCost(0), catalog.WithHook(t.hold))
	shop := newShop(db)
	var started atomic.Int64
	crowd := harness.Visit(h, Visitors, func(ctx context.Context, _ int) ([]string, error) {
		started.Add(1)
		return shop.Top(ctx, catalog.Bestsellers)
	})
	defer t.release()

	var sizes []int // queries in each round
	for {
		// A round is over once a query waits at its gate (or everyone has
		// left) and the process has settled.
		err := h.Settled(func() bool { return started.Load() == Visitors && (t.waiting() > 0 || crowd.Done()) })
		if err != nil {
			return Stuck(err)
		}
		if t.waiting() == 0 {
			break
		}
		if len(sizes) == 0 && h.Asleep() {
			if err := Linger(h); err != nil {
				return Stuck(err)
			}
			if err := h.Settled(func() bool { return true }); err != nil {
				return Stuck(err)
			}
		}
		sizes = append(sizes, t.next())
		if len(sizes) > 2*Visitors {
			return check.Failed(fmt.Sprintf("%d rounds", len(sizes)),
				"the visitors kept querying, round after round, and never finished")
		}
	}
	t.release()
	if v := finished(nil, crowd); !v.Pass {
		return v
	}

	rounds := len(sizes)
	figure := fmt.Sprintf("%d rounds of queries", rounds)
	switch {
	case rounds == 0:
		return check.Failed(figure, "the list must come from the database, once")
	case rounds == 1:
		v := check.Passed(fmt.Sprintf("1 round of queries, %d queries in it", sizes[0]))
		if sizes[0] == 1 {
			v = check.Passed("1 round of queries, 1 query in it")
		}
		return after(v, Later(h, shop, db, catalog.Bestsellers))
	}
	later := 0
	for _, n := range sizes[1:] {
		later += n
	}
	return check.Failed(figure, fmt.Sprintf(
		"the visitors waited through %d rounds of queries, one after another: %d queries began only after the first had answered, "+
			"while visitors were still waiting. With %.1f s queries that is %.1f s, where one round would take %.1f s",
		rounds, later, catalog.QueryCost.Seconds(), float64(rounds)*catalog.QueryCost.Seconds(), catalog.QueryCost.Seconds()))
}
