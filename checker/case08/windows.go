package case08

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"stampede/checker/check"
	"stampede/checker/explore"
	"stampede/checker/fleet"
	"stampede/checker/harness"
	"stampede/shop/events"
)

// The checks in this file stage what the cold start's checks do not: a
// query that fails and the readers who come after it, an outage that lasts,
// a reader who hangs up while its rebuild waits for a slot, a slow write to
// Redis, and hits between the warm-up and the expiry. Each decides with a
// gate, a held command or the shop's clock, and counts at rest.

// The failure scene's sizes.
const (
	// failPages is how many pages' first query fails: more than the pool
	// holds, so that a failure that keeps its slot (given back on the
	// paths that worked, not on the error path) empties the pool, and the
	// readers after the failures find none.
	failPages = 25
	// freshPages is how many other pages the cold start after the
	// failures reads: twice the pool.
	freshPages = 40
)

// errFailed is the failure the scenes plan for a query.
var errFailed = errors.New("the database failed the query (planned by the checker)")

// failed is what the failure scene did.
type failed struct {
	atGate int                    // queries in the database once the readers after had settled, held
	most   int                    // the most queries at once, over the whole scene
	after  *harness.Crowd[string] // the readers after the failures
	ids    []int                  // their pages
	fail   check.Verdict          // set when the scene itself went wrong
}

// afterFailures plays the failure scene. First every query of events 1 to
// 25 fails at once (or, with panics set, panics, as a driver's bug does,
// on the goroutine that queried), with two readers each. Once they have all returned, the
// database answers again: one reader comes for each page of ids. With held
// set, every query is held at the gate while hold passes on the shop's
// clock, and counted, before the gate opens; else none is held. Then the
// scene runs to its end.
func afterFailures(h *harness.H, newShop NewShop, ids []int, held, panics bool) (c failed) {
	var down atomic.Bool
	down.Store(true)
	hook := func(s *scene, ctx context.Context, id int) error {
		if id <= failPages && down.Load() {
			if panics {
				panic(errFailed)
			}
			return errFailed
		}
		return s.gate.Wait(ctx)
	}
	s, err := newSceneWith(h, newShop, true, hook, nil)
	if err != nil {
		c.fail = fleet.Unreachable(err)
		return c
	}
	defer s.Close()
	first := s.read(coldIDs(failPages, 2))
	if err := s.Drive(first.Done, patience); err != nil {
		c.fail = waitVerdict(err, "the readers of the failed queries were")
		return c
	}
	for i, o := range first.Outcomes() {
		if o.Panic == "" {
			continue
		}
		what := "failed"
		if panics {
			what = "panicked (a driver's bug)"
		}
		c.fail = check.Failed("a reader panicked", fmt.Sprintf("the query of event %d %s, and its reader's call "+
			"panicked too: %s. A reader of a query that fails or panics gets an error: recover the panic where "+
			"the query runs and make it the flight's error, and hand the readers that error, never a value that "+
			"is not there", coldIDs(failPages, 2)[i], what, o.Panic))
		return c
	}
	down.Store(false)
	if !held {
		s.gate.Open()
	}
	c.ids = ids
	c.after = s.read(ids)
	if held {
		if err := s.Elapse(hold); err != nil {
			c.fail = stuckVerdict(err)
			return c
		}
		c.atGate = s.db.Running()
		s.gate.Open()
	}
	if err := s.Drive(c.after.Done, patience); err != nil {
		c.most = s.db.Most()
		c.fail = waitVerdict(err, "the readers after the failed queries were")
		return c
	}
	c.most = s.db.Most()
	return c
}

// FailedAgain checks that a page whose query failed is queried again by
// its next reader, who gets its page: every query of events 1 to 25 fails,
// then, once their readers have returned, the database answers again and
// one more reader comes for each; the same with queries that panic; and
// with Redis failing the rebuilds' second looks (secondLooksFail). It
// catches a failed flight left on the flight table, a failure remembered
// in Redis, and a slot that a failed query, a panicking one or a failed
// second look keeps: 25 failures leave none of the pool's 20.
func FailedAgain(h *harness.H, newShop NewShop) check.Verdict {
	c := afterFailures(h, newShop, events.IDs(failPages), false, false)
	if c.fail.Message != "" {
		return c.fail
	}
	if v := allGot(c.after.Outcomes(), c.ids); !v.Pass {
		return check.Failed(v.Figure, fmt.Sprintf("every query of events 1 to %d failed, and every reader of those had "+
			"returned; then the database answered again, and %s. A failure is not kept (case 5): take the failed flight off "+
			"the table, store nothing for it, give back its slot once, and let the page's next reader query again",
			failPages, v.Message))
	}
	// The same, with queries that panic: a slot given back by hand after
	// the query is never given back by one that panics.
	c = afterFailures(h, newShop, events.IDs(failPages), false, true)
	if c.fail.Message != "" {
		return c.fail
	}
	if v := allGot(c.after.Outcomes(), c.ids); !v.Pass {
		return check.Failed(v.Figure+" after panics", fmt.Sprintf("every query of events 1 to %d panicked (a driver's "+
			"bug), and every reader of those had returned; then the database answered again, and %s. A query that "+
			"panics must give back what it took as one that fails does: its slot in a defer, its flight off the table, "+
			"and its readers told (case 5)", failPages, v.Message))
	}
	// The same, with Redis failing the rebuilds' second looks: a slot
	// whose release is set up after the second look is never given back
	// by one that fails.
	looks, v := secondLooksFail(h, newShop)
	if !v.Pass {
		return v
	}
	return check.Passed(fmt.Sprintf("%d readers after failed queries, %d after panicking ones and %d after %s, each with its page",
		len(c.ids), len(c.ids), freshPages, count(looks, "failed second look", "failed second looks")))
}

// errBlip is the error of a Redis command in secondLooksFail: one
// connection's, gone at once.
var errBlip = errors.New("read tcp 127.0.0.1:6379: i/o timeout (planned by the checker)")

// secondLooksFail is FailedAgain's scene of a Redis that fails a
// rebuild's second look: one reader comes for each of events 1 to 25 and
// Redis fails the second command that reads the page's key (the first is
// the reader's miss; the second, in most answers, the rebuild's look once
// it holds its slot). Once they have returned, Redis is well again, and
// one reader comes for each of 40 other pages: each must get its page. It
// returns how many second looks failed, and catches a slot whose release
// is deferred only after the second look: each blip keeps one, and 20
// leave none (c08-second-look-before-defer). An answer that never reads a
// page twice plays the scene with nothing failed, and is judged by the
// other two.
func secondLooksFail(h *harness.H, newShop NewShop) (int, check.Verdict) {
	t := fleet.NewTap(nil)
	var on atomic.Bool
	on.Store(true)
	looks := map[string]int{} // reads of each key; the Tap calls match under its lock
	t.Fail(func(c fleet.Command) bool {
		if !on.Load() || !c.Reads() || len(c.Keys) != 1 {
			return false
		}
		looks[c.Keys[0]]++
		return looks[c.Keys[0]] == 2
	}, errBlip, -1)
	s, err := newSceneOn(h, newShop, t, false, nil)
	if err != nil {
		return 0, fleet.Unreachable(err)
	}
	defer s.Close()
	first := s.read(events.IDs(failPages))
	if err := s.Drive(first.Done, patience); err != nil {
		return 0, waitVerdict(err, "the readers whose second looks failed were")
	}
	on.Store(false)
	failed := 0
	for _, c := range t.Log() {
		if c.Said == "error: "+errBlip.Error() {
			failed++
		}
	}
	ids := events.IDs(failPages + freshPages)[failPages:]
	after := s.read(ids)
	if err := s.Drive(after.Done, patience); err != nil {
		return failed, waitVerdict(err, "the readers after the failed second looks were")
	}
	if v := allGot(after.Outcomes(), ids); !v.Pass {
		return failed, check.Failed(v.Figure+" after failed second looks", fmt.Sprintf("one reader came for each of "+
			"events 1 to %d, and Redis failed the second command that read each page (%v): %d of them, the rebuilds' "+
			"second looks in most answers; once they had returned, Redis was well again, and %s. A rebuild that fails "+
			"at any step gives its slot back: set up the release (a defer) in the statement right after the slot is "+
			"taken, before anything that can return", failPages, errBlip, failed, v.Message))
	}
	return failed, check.Passed("")
}

// SlotsAfterFailure checks that after failed queries the database still
// never sees more than 20 queries at once: every query of events 1 to 25
// fails, then 40 fresh pages have a reader each, their queries held at the
// gate and counted. It catches a failed query that gives its slot back
// twice. A shop that is past the bound in a cold start with no failure
// fails too, told so rather than of a double release.
func SlotsAfterFailure(h *harness.H, newShop NewShop) check.Verdict {
	c := afterFailures(h, newShop, events.IDs(failPages + freshPages)[failPages:], true, false)
	if c.fail.Message != "" && c.most == 0 {
		return c.fail
	}
	figure := fmt.Sprintf("at most %d at once after %d failed pages (%d held at the gate)", c.most, failPages, c.atGate)
	if c.most > pool {
		// Whether the failures widened the bound shows only in a shop that
		// keeps it without them: play the cold start with none.
		if plain := coldStart(h, newShop); plain.fail.Message == "" && plain.most > pool {
			return check.Failed(figure, fmt.Sprintf("after every query of %d pages had failed, a cold start of %d other pages "+
				"had %d queries in the database at once, and its pool holds %d; but a cold start with no failure at all had %d "+
				"at once too: nothing bounds the rebuilds to the pool (see at-most), so a failure has no bound to widen. Take a "+
				"slot before each query, give it back once after, and this check then sees what a failure does to the slots",
				failPages, freshPages, c.most, pool, plain.most))
		}
		return check.Failed(figure, fmt.Sprintf("after every query of %d pages had failed, a cold start of %d other pages "+
			"had %d queries in the database at once, and its pool holds %d: a failed query gives its slot back once, as a "+
			"query that worked does (one deferred release, and nothing by hand on the error path)", failPages, freshPages, c.most, pool))
	}
	if c.fail.Message != "" {
		return c.fail
	}
	return check.Passed(figure)
}

// StarterLeaves checks that a reader who hangs up while its page's rebuild
// waits for a database slot takes no other reader's page with it: the pool
// is held full at the gate, the starters of events 21 and 22 each have a
// second reader waiting with them, and one starter is cancelled, the other
// reaches its deadline. It catches a slot taken on the starter's context.
// A shop whose rebuilds do not wait for a slot when the pool is full
// fails too: it keeps the scene from happening.
func StarterLeaves(h *harness.H, newShop NewShop) check.Verdict {
	s, err := newScene(h, newShop, true)
	if err != nil {
		return fleet.Unreachable(err)
	}
	defer s.Close()
	full := s.read(events.IDs(pool))
	if err := s.rest(); err != nil {
		return stuckVerdict(err)
	}
	pages := []int{pool + 1, pool + 2}
	var ends []func()
	ctxs := make([]context.Context, len(pages))
	for i := range pages {
		var end func()
		ctxs[i], end, _ = explore.NewContext(i, i == 1) // a cancel, then a deadline
		ends = append(ends, end)
	}
	defer func() {
		for _, end := range ends {
			end()
		}
	}()
	starters := s.visit(len(pages), func(_ context.Context, i int) (string, error) { return s.shop.Page(ctxs[i], pages[i]) })
	if err := s.rest(); err != nil {
		return stuckVerdict(err)
	}
	if in := s.db.Running(); in > pool {
		// Their rebuilds did not wait for a slot: the scene cannot happen.
		return check.Failed(fmt.Sprintf("%d queries at once", in), fmt.Sprintf("the pool of %d was held full at the gate, and "+
			"the rebuilds of events %d and %d went into the database beside it (%d queries at once): no rebuild waited for a "+
			"slot, so none could be left waiting when its starter hung up. Bound the rebuilds to the pool (see at-most), and "+
			"wait for the slot on context.WithoutCancel(ctx), not on the starter's context", pool, pages[0], pages[1], in))
	}
	joiners := s.read(pages)
	if err := s.rest(); err != nil {
		return stuckVerdict(err)
	}
	for _, end := range ends {
		end()
	}
	if err := s.rest(); err != nil {
		return stuckVerdict(err)
	}
	s.gate.Open()
	if err := s.Drive(func() bool { return full.Done() && starters.Done() && joiners.Done() }, patience); err != nil {
		return waitVerdict(err, "the readers were")
	}
	if v := allGot(joiners.Outcomes(), pages); !v.Pass {
		return check.Failed(v.Figure, fmt.Sprintf("the pool was full, and the readers who started the rebuilds of events %d "+
			"and %d left (a cancel, a deadline) while their rebuilds waited for a slot; then %s, though its own context never "+
			"ended. The rebuild works for every reader of the page: wait for the slot on context.WithoutCancel(ctx) too, not on "+
			"the starter's context", pages[0], pages[1], v.Message))
	}
	return check.Passed(fmt.Sprintf("%d readers served after their starters left", len(pages)))
}

// outageCost is how long a query takes to fail in an outage, on the shop's
// clock.
const outageCost = 50 * time.Millisecond

// Outage checks that while the database fails every query, for good, every
// reader returns within maxBudget of the shop's clock with the query's
// error or a "try again". It catches a retry that starts the budget again.
func Outage(h *harness.H, newShop NewShop) check.Verdict {
	const n, per = 10, 2
	hook := func(s *scene, ctx context.Context, _ int) error {
		if err := s.clk.Sleep(ctx, outageCost); err != nil {
			return err
		}
		return errFailed
	}
	s, err := newSceneWith(h, newShop, false, hook, nil)
	if err != nil {
		return fleet.Unreachable(err)
	}
	defer s.Close()
	ids := coldIDs(n, per)
	readers := s.read(ids)
	start := s.clk.Now()
	err = s.Drive(readers.Done, maxBudget)
	if errors.Is(err, errNoBound) {
		return check.Failed(fmt.Sprintf("%d of %d readers still waiting after %v", len(ids)-returned(readers), len(ids), maxBudget),
			fmt.Sprintf("the database failed every query (after %v each) and went on failing, and readers still waited after "+
				"%v of the shop's clock (%s): a reader's budget covers its whole wait, retries included. Start the budget once, "+
				"when the reader arrives, and past it return a *TryAgain, or the query's error", outageCost, maxBudget, readers.Where()))
	}
	if err != nil {
		return stuckVerdict(err)
	}
	for i, o := range readers.Outcomes() {
		var later interface{ RetryAfter() time.Duration }
		switch {
		case o.Panic != "":
			return check.Failed("", fmt.Sprintf("the reader of event %d panicked: %s", ids[i], o.Panic))
		case o.Err == nil:
			return check.Failed("", fmt.Sprintf("the reader of event %d got %q, though the database answered no query", ids[i], o.Value))
		case errors.Is(o.Err, errFailed):
		case errors.As(o.Err, &later) && later.RetryAfter() > 0:
		default:
			return check.Failed("", fmt.Sprintf("the reader of event %d got the error %q, which is neither the query's error "+
				"(wrap it with %%w) nor a *TryAgain", ids[i], o.Err))
		}
	}
	// One query per page's flight: a flight that tries a failed query
	// again at once multiplies the load on a database already failing.
	if q := s.db.Total(); q > n {
		why := "a failed query was tried again at once. A failure goes back to the readers (the next reader queries " +
			"again); retrying it at once, with no wait, sends a failing database the same load again and again"
		if q <= len(ids) {
			why = "the two readers of a page queried each on its own, with no flight for them to share (see once)"
		}
		return check.Failed(fmt.Sprintf("%d queries for %d pages", q, n), fmt.Sprintf("the database failed every query "+
			"(after %v each), and %d readers came for %d pages, two for each; the database got %d queries, more than one "+
			"per page: %s", outageCost, len(ids), n, q, why))
	}
	return check.Passed(fmt.Sprintf("%d readers answered within %v of an outage, one query per page", len(ids), s.clk.Now().Sub(start)))
}

// SlowWrite checks that a slow Redis write of one page holds up no other
// page's rebuild: the first write of event 1's page is held on its way to
// Redis (a slow network), and a reader of event 2, missing, must get its
// page meanwhile. It catches a flight table whose lock is held across the
// write.
func SlowWrite(h *harness.H, newShop NewShop) check.Verdict {
	held := make(chan struct{})
	var holding atomic.Bool
	var release sync.Once
	letGo := func() { release.Do(func() { close(held) }) }
	slow := events.PageOf(1)
	stage := func(_ context.Context, cmd redis.Cmder, answered bool) {
		if answered || fleet.ReadOnly(strings.ToLower(fleet.ArgString(cmd.Args()[0]))) {
			return
		}
		for _, a := range cmd.Args()[1:] {
			if fleet.ArgString(a) == slow && !holding.Swap(true) {
				<-held
				return
			}
		}
	}
	s, err := newSceneWith(h, newShop, false, nil, stage)
	if err != nil {
		return fleet.Unreachable(err)
	}
	defer s.Close()
	defer letGo()
	first := s.read([]int{1})
	if err := s.rest(); err != nil {
		return stuckVerdict(err)
	}
	if !holding.Load() {
		// The page went to Redis in a pipeline or a transaction, which the
		// tap does not stage, or not at all.
		letGo()
		if err := s.Drive(first.Done, patience); err != nil {
			return waitVerdict(err, "the reader of event 1 was")
		}
		queried := s.db.Queries(1)
		again := s.read([]int{1})
		if err := s.Drive(again.Done, patience); err != nil {
			return waitVerdict(err, "the second reader of event 1 was")
		}
		if s.db.Queries(1) > queried {
			return check.Failed("", "event 1's page never went to Redis: its next reader queried the database again, so there "+
				"was no write to hold on its way. Store each rebuilt page (see once)")
		}
		return check.Skipped("not staged: event 1's page went to Redis in a pipeline or a transaction, which the checker " +
			"does not hold on its way")
	}
	second := s.read([]int{2})
	if err := s.rest(); err != nil {
		return stuckVerdict(err)
	}
	got, where, queried := second.Outcomes()[0], second.Where(), s.db.Queries(2)
	letGo()
	if err := s.Drive(func() bool { return first.Done() && second.Done() }, patience); err != nil {
		return waitVerdict(err, "the readers were")
	}
	if !got.Returned || got.Err != nil || got.Value != events.PageOf(2) {
		what := "had not returned"
		switch {
		case got.Returned && got.Err != nil:
			what = fmt.Sprintf("got the error %q", got.Err)
		case got.Returned:
			what = fmt.Sprintf("got %q", got.Value)
		case queried == 0:
			what = fmt.Sprintf("had not even started its query (%s)", where)
		}
		return check.Failed("", fmt.Sprintf("while the write of event 1's page to Redis was held on its way (a slow network), "+
			"the reader of event 2, who missed Redis, %s: one page's write must not hold up another page's rebuild. Hold the "+
			"flight table's lock only to look up or change the table, never across a call to Redis or the database", what))
	}
	return check.Passed("event 2 served while event 1's write was held")
}

// The hits scene's sizes.
const (
	// hitPages is how many pages the hits scene warms and reads: enough to
	// judge a spread (busiestBound), few enough to be quick.
	hitPages = 300
	// aged is how far the hits scene moves Redis's clock between the
	// warm-up and the hits, on the embedded server.
	aged = 10 * time.Second
)

// HitTTL checks that hits leave a page's time to live alone: the warm-up of
// 300 pages, then 10 s on Redis's clock and the shop's (on the embedded
// server; on a real one the time it takes), then a reader for every page,
// served from Redis. No key may then have longer to live than before the
// hits, less the 10 s, and the times to live must still be spread. It
// catches GETEX or EXPIRE on a hit, with or without a fresh draw.
func HitTTL(h *harness.H, newShop NewShop) check.Verdict {
	s, err := newScene(h, newShop, false)
	if err != nil {
		return fleet.Unreachable(err)
	}
	defer s.Close()
	ids := events.IDs(hitPages)
	w := s.warm(ids)
	if err := s.Drive(w.Done, patience); err != nil {
		return waitVerdict(err, "the warm-up was")
	}
	if o := w.Outcomes()[0]; o.Panic != "" || o.Err != nil {
		return check.Failed("", fmt.Sprintf("the warm-up failed: %v%s", o.Err, o.Panic))
	}
	before, err := s.world.Read(h.Context(), nil)
	if err != nil {
		return fleet.Unreachable(err)
	}
	warmWrites := s.tap.Wrote()
	moved := time.Duration(0)
	if s.world.Embedded() {
		moved = aged
		if err := s.world.Advance(h.Context(), aged, nil); err != nil {
			return fleet.Unreachable(err)
		}
		s.clk.Set(s.clk.Now().Add(aged))
	}
	queries := s.db.Total()
	outs, err := s.readInWaves(ids)
	if err != nil {
		return waitVerdict(err, "the readers of the warmed pages were")
	}
	if v := allGot(outs, ids); !v.Pass {
		return check.Failed(v.Figure, "after the warm-up: "+v.Message)
	}
	if q := s.db.Total() - queries; q > 0 {
		return check.Failed(count(q, "query", "queries"), fmt.Sprintf("%v after the warm-up, one reader of each of %d pages "+
			"made %s: the pages the warm-up stored should be served from Redis", moved, len(ids), count(q, "query", "queries")))
	}
	after, err := s.world.Read(h.Context(), nil)
	if err != nil {
		return fleet.Unreachable(err)
	}
	var longer []string
	n := 0
	for k, b := range before.TTL {
		a, ok := after.TTL[k]
		if b < 0 || !ok {
			continue
		}
		if a < 0 || a > b-moved+time.Millisecond {
			n++
			if len(longer) < 3 {
				longer = append(longer, fmt.Sprintf("%s: %s left before, %s after", k, secs3(b-moved), ttlString(a)))
			}
		}
	}
	if n > 0 {
		return check.Failed(fmt.Sprintf("%d of %d keys live longer after a hit", n, len(before.TTL)), fmt.Sprintf(
			"%v after the warm-up every page had a reader, and then %s than before the hits (%s): a hit must leave the time "+
				"to live alone (GET, not GETEX or EXPIRE). A page lives 30 to 35 s from its write, whoever reads it: a page whose "+
				"hits renew it is never rebuilt and never shows its event's changes, and pages read together expire together again",
			moved, count(n, "key had longer to live", "keys had longer to live"), strings.Join(longer, "; ")))
	}
	// The spread after the hits, when the warm-up's was right (else
	// warm-spread has already said so): on a real server, where Redis's
	// clock cannot be moved, this is what shows a hit that writes 30 s.
	warm := spread(lifetimes(before, warmWrites, s.world.Embedded(), s.start), "the warm-up")
	if v := spread(lifetimes(after, s.tap.Wrote(), s.world.Embedded(), s.start), "the hits"); warm.Pass && !v.Pass {
		return v
	}
	return check.Passed(fmt.Sprintf("%d pages read %v after the warm-up, their times to live untouched", len(ids), moved))
}

// ttlString says how long a key has to live, or that it has no end.
func ttlString(d time.Duration) string {
	if d < 0 {
		return "no time to live"
	}
	return secs3(d)
}

// lateBy is how long before the first reader's budget runs out the late
// reader of LateReader comes, and how long after it the query lands: a
// tenth of a second, or a quarter of a shorter budget.
const lateBy = 100 * time.Millisecond

// LateReader checks that every reader waits a budget of its own, counted
// from when it came. A first scene learns the shop's budget B: one reader
// of a page whose query is held at the gate, turned away after B on the
// shop's clock. In a second, a second reader of that page comes at
// B - 0.1 s, and the query lands at B + 0.1 s, when the first reader has
// gone: the second has waited 0.2 s and must get its page. It catches one
// budget timer for the whole flight, started by its first reader, which
// turns away whoever joins the flight late. A shop with no budget, or one
// that turns its reader away at once, keeps the scene from happening, and
// fails.
func LateReader(h *harness.H, newShop NewShop) check.Verdict {
	budget, v := learnBudget(h, newShop)
	if !v.Pass {
		return v
	}
	late := min(lateBy, budget/4)
	s, err := newScene(h, newShop, true)
	if err != nil {
		return fleet.Unreachable(err)
	}
	defer s.Close()
	ids := []int{1}
	first := s.read(ids)
	if err := s.Elapse(budget - late); err != nil {
		return stuckVerdict(err)
	}
	second := s.read(ids)
	if err := s.Elapse(2 * late); err != nil {
		return stuckVerdict(err)
	}
	if !first.Done() {
		// The budget learned in the first scene did not hold in this one:
		// no mistake the checker can name (a budget drawn for each reader).
		return check.Skipped(fmt.Sprintf("not staged: the first reader, turned away after %v in a first scene, "+
			"still waited %v after it came in a second", budget, budget+late))
	}
	s.gate.Open()
	if err := s.Drive(second.Done, patience); err != nil {
		return waitVerdict(err, "the late reader was")
	}
	if v := allGot(second.Outcomes(), ids); !v.Pass {
		return check.Failed(v.Figure, fmt.Sprintf("the shop's budget is %v: a reader of event 1, with its query held, was told "+
			"to try again after it. A second reader came %v before that, and the query landed %v after it, when the second had "+
			"waited %v; %s. Each reader waits its own budget, from when it came (a clock.WithTimeout in the reader, around its "+
			"wait), not what is left of the first reader's", budget, late, late, 2*late, v.Message))
	}
	return check.Passed(fmt.Sprintf("a reader who came %v before the first gave up got its page %v later", late, 2*late))
}

// learnBudget times the shop's budget: one reader of event 1, its query
// held at the gate, until it returns with an error. It fails when the
// reader never returns (past the longest budget allowed, or waiting for
// nothing the shop's clock moves), returns at once, or returns anything
// but an error: each keeps the late reader's scene from happening.
func learnBudget(h *harness.H, newShop NewShop) (time.Duration, check.Verdict) {
	s, err := newScene(h, newShop, true)
	if err != nil {
		return 0, fleet.Unreachable(err)
	}
	defer s.Close()
	r := s.read([]int{1})
	start := s.clk.Now()
	err = s.Drive(r.Done, maxBudget)
	budget := s.clk.Now().Sub(start)
	var stuck *harness.Stuck
	switch {
	case errors.Is(err, errNoBound) || errors.As(err, &stuck):
		return 0, check.Failed("", fmt.Sprintf("the reader of event 1, its query held, still waited after %v of the shop's "+
			"clock (%s): with no budget nobody is turned away, and nobody can come late to a reader who gave up. Give the "+
			"wait a budget (see the budget check)", maxBudget, r.Where()))
	case err != nil:
		return 0, stuckVerdict(err)
	}
	switch o := r.Outcomes()[0]; {
	case o.Panic != "":
		return 0, check.Failed("", "the reader of event 1, its query held, panicked: "+o.Panic)
	case o.Err == nil:
		return 0, check.Failed("", fmt.Sprintf("the reader of event 1 got %q while its query was held, and no error", o.Value))
	case budget/4 == 0:
		return 0, check.Failed("", fmt.Sprintf("the reader of event 1 was turned away at once (%v) while its query was held: "+
			"a reader waits a budget (a second or so) for its page before it is told to try again", o.Err))
	}
	return budget, check.Passed("")
}

// redisDownInfo is the check that a Redis outage is not a stampede on the
// database.
var redisDownInfo = check.Info{
	ID:   "redis-down",
	Name: "while Redis fails every command, the database gets at most one query a second for a page, however many readers come for it",
	Catches: "a Redis error read as a miss: during a Redis outage every reader of every page queries the database, " +
		"and the outage of the cache becomes a stampede on what it protects",
}

// errRedisDown is what every command gets in RedisDown.
var errRedisDown = errors.New("dial tcp 127.0.0.1:6379: connect: connection refused (planned by the checker)")

// RedisDown checks that a Redis outage does not send every reader to the
// database: every command the shop sends Redis fails, and a reader of one
// page comes every 50 ms for a second, each after the one before has
// returned. Each may get an error or the page; the page's queries may be
// at most one a second, and one more. It catches a Redis error read as a
// miss.
func RedisDown(h *harness.H, newShop NewShop) check.Verdict {
	const readers, every, id = 20, 50 * time.Millisecond, 1
	t := fleet.NewTap(nil)
	t.Fail(func(c fleet.Command) bool { return len(c.Keys) > 0 }, errRedisDown, -1)
	s, err := newSceneOn(h, newShop, t, false, nil)
	if err != nil {
		return fleet.Unreachable(err)
	}
	defer s.Close()
	for range readers {
		c := s.read([]int{id})
		if err := s.Drive(c.Done, maxBudget); err != nil {
			return waitVerdict(err, "a reader, with Redis down,")
		}
		if o := c.Outcomes()[0]; o.Panic != "" {
			return check.Failed("", fmt.Sprintf("the reader of event %d panicked: %s", id, o.Panic))
		} else if o.Err == nil {
			if v := allGot(c.Outcomes(), []int{id}); !v.Pass {
				return v
			}
		}
		if err := s.Elapse(every); err != nil {
			return stuckVerdict(err)
		}
	}
	q, limit := s.db.Queries(id), int(readers*every/time.Second)+1
	figure := fmt.Sprintf("%s for %d readers of one page in %v, Redis down", count(q, "query", "queries"), readers, readers*every)
	if q > limit {
		return check.Failed(figure, fmt.Sprintf("every command the shop sent Redis failed (%v), and a reader of event %d "+
			"came every %v; the database got %d queries for the page, more than one a second. A Redis error is not a "+
			"miss: the page may well be there, and reading through to the database for every reader turns an outage of "+
			"the cache into a stampede on the database. Return the error (or serve through one flight, and not once "+
			"per reader)", errRedisDown, id, every, q))
	}
	return check.Passed(figure)
}
