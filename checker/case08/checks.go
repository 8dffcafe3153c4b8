package case08

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"stampede/checker/check"
	"stampede/checker/fleet"
	"stampede/checker/harness"
	"stampede/checker/point"
	"stampede/shop/events"
)

// The scenes' sizes and bounds.
const (
	// pages is how many event pages the warm-up and the big cold start
	// hold: half the story's 2,000, which is plenty for the statistics
	// (see busiestBound) and half the work on a loaded machine.
	pages = 1000
	// rebuilt is how many pages the rebuild check's cold start holds: a
	// cold start is heavier than a warm-up (a flight, a budget and a
	// reader per page), and 500 draws still judge the spread (bound 41;
	// whole seconds put about 83 in one instant).
	rebuilt = 500
	// A cold start for the counting checks: more pages than the pool, each
	// with several readers.
	coldPages = 60
	perPage   = 3
	// hold is how long, on the shop's clock, the cold start's first queries
	// are held at the gate before they are counted: readers that wait on a
	// timer shorter than that (a poll, a bound that gives up and queries)
	// have acted by then. A budget must outlast it.
	hold = 100 * time.Millisecond
	// patience is how far the checker moves the shop's clock for a wait
	// that should end by itself.
	patience = 30 * time.Second
	// maxBudget is the longest a reader may wait before "try again".
	maxBudget = 10 * time.Second
	// pool is the database's connection pool: the most queries at once.
	pool = events.Pool
)

// wave is how many readers the big scenes send at once: enough to crowd the
// pool many times over, few enough that a scene settles quickly with every
// reader's goroutines (its own, a flight's, a budget's) alive together.
const wave = 250

// realWave is the wave on a real server: fewer readers than the client's
// pool has connections, so that no write waits for a connection and the
// tap times each write closely (see lifetimes).
const realWave = 50

// readInWaves reads the page of each of ids, wave readers at a time, each
// wave driven to its end, and returns what every reader got.
func (s *scene) readInWaves(ids []int) ([]harness.Outcome[string], error) {
	size := wave
	if !s.world.Embedded() {
		size = realWave
	}
	var outs []harness.Outcome[string]
	for len(ids) > 0 {
		n := min(size, len(ids))
		c := s.read(ids[:n])
		if err := s.Drive(c.Done, patience); err != nil {
			return nil, err
		}
		outs = append(outs, c.Outcomes()...)
		ids = ids[n:]
	}
	return outs, nil
}

// warmed runs the warm-up of 1,000 pages in a fresh world and
// reads every key's time to live from Redis. It returns a failing verdict
// when the warm-up itself did not finish or fail cleanly.
func warmed(h *harness.H, newShop NewShop) (*scene, []lifetime, check.Verdict) {
	s, err := newScene(h, newShop, false)
	if err != nil {
		return nil, nil, fleet.Unreachable(err)
	}
	w := s.warm(events.IDs(pages))
	if err := s.Drive(w.Done, patience); err != nil {
		return s, nil, waitVerdict(err, "the warm-up was")
	}
	switch o := w.Outcomes()[0]; {
	case o.Panic != "":
		return s, nil, check.Failed("", "the warm-up panicked: "+o.Panic)
	case o.Err != nil:
		return s, nil, check.Failed("", "the warm-up failed: "+o.Err.Error())
	}
	r, err := s.world.Read(h.Context(), nil)
	if err != nil {
		return s, nil, fleet.Unreachable(err)
	}
	ls := lifetimes(r, s.tap.Wrote(), s.world.Embedded(), s.start)
	if len(ls) < pages {
		return s, nil, check.Failed(count(len(ls), "key", "keys"), fmt.Sprintf("the warm-up of %d pages left %d keys in Redis: "+
			"store every page, each under a key of its own", pages, len(ls)))
	}
	return s, ls, check.Passed("")
}

// WarmTTL checks that every key the warm-up writes lives 30 to 35 s, read
// from Redis with PTTL, and that the warmed pages serve their readers with
// no query. It catches jitter subtracted below the floor, jitter wider than
// 5 s, and a page with no time to live.
func WarmTTL(h *harness.H, newShop NewShop) check.Verdict {
	s, ls, v := warmed(h, newShop)
	if s != nil {
		defer s.Close()
	}
	if !v.Pass {
		return v
	}
	if v := inRange(ls, "the warm-up"); !v.Pass {
		return v
	}
	// A reader for one page in four: enough to see the warm-up's pages
	// served from Redis, and quick on a real server.
	var sample []int
	for id := 1; id <= pages; id += 4 {
		sample = append(sample, id)
	}
	before := s.db.Total()
	outs, err := s.readInWaves(sample)
	if err != nil {
		return waitVerdict(err, "the readers of the warmed pages were")
	}
	if v := allGot(outs, sample); !v.Pass {
		return check.Failed(v.Figure, "after the warm-up: "+v.Message)
	}
	if q := s.db.Total() - before; q > 0 {
		return check.Failed(count(q, "query", "queries"), fmt.Sprintf("after the warm-up, one reader of each of %d pages made %s: "+
			"the pages the warm-up stored should be served from Redis", len(sample), count(q, "query", "queries")))
	}
	return check.Passed(fmt.Sprintf("%d keys, from %s to %s", len(ls), secs3(ls[0].mid()), secs3(ls[len(ls)-1].mid())))
}

// inRange fails when a key's time to live cannot be in [30 s, 35 s].
func inRange(ls []lifetime, who string) check.Verdict {
	bad := outOfRange(ls)
	if len(bad) == 0 {
		return check.Passed("")
	}
	figure := fmt.Sprintf("%d of %d keys outside 30 to 35 s", len(bad), len(ls))
	var eg []string
	for _, l := range bad[:min(3, len(bad))] {
		eg = append(eg, l.String())
	}
	why := "a page lives 30 s plus a random 0 to 5 s: never less than the 30 s the box office promised its data, never more than 35 s"
	switch {
	case bad[0].forever:
		why = "a page with no time to live is never rebuilt, and its event's changes never show"
	case bad[0].hi < pageTTL:
		why = "add the jitter to the 30 s, never take it off: a page's 30 s is the floor of its freshness budget, and the jitter only spreads expiries above it"
	}
	return check.Failed(figure, fmt.Sprintf("after %s, %s (such as %s): %s", who, count(len(bad), "key's time to live was", "keys' times to live were"),
		strings.Join(eg, ", "), why))
}

// WarmSpread checks that the warm-up's times to live are spread over the
// 5 s: no 100 ms window holds more keys than busiestBound allows (a false
// failure for a correct uniform draw has a chance below 1e-6; see
// busiestBound for the computation), and the times to live cover at least
// 4.5 s of the 5 (a correct draw of 1,000 misses that with a chance near
// 1e-45). It catches a fixed 30 s, one draw per warm-up, a per-call
// rand.New with a fixed seed, and whole-second jitter.
func WarmSpread(h *harness.H, newShop NewShop) check.Verdict {
	s, ls, v := warmed(h, newShop)
	if s != nil {
		defer s.Close()
	}
	if !v.Pass {
		return v
	}
	return spread(ls, "the warm-up")
}

// spread judges how the times to live are spread.
func spread(ls []lifetime, who string) check.Verdict {
	var timed []lifetime
	for _, l := range ls {
		if !l.forever {
			timed = append(timed, l)
		}
	}
	if len(timed) == 0 {
		return check.Failed("no key with a time to live", who+" left no key with a time to live in Redis")
	}
	sure := precise(timed)
	cover := sure[len(sure)-1].mid() - sure[0].mid()
	most, at := busiest(sure)
	bound, _ := busiestBound(len(sure), slack(sure))
	figure := fmt.Sprintf("busiest 100 ms: %d of %d keys (at most %d), spread over %.1f s", most, len(sure), bound, cover.Seconds())
	switch {
	case most > bound:
		return check.Failed(figure, fmt.Sprintf("after %s, %d keys have a time to live between %s and %s: they expire in the "+
			"same 100 ms, and their rebuilds land on the database together. Draw the jitter for each page, in milliseconds "+
			"or finer (whole seconds make six spikes of about %d)", who, most, secs3(at), secs3(at+window), len(sure)/6))
	case cover < minCover:
		return check.Failed(figure, fmt.Sprintf("after %s, the times to live run from %s to %s: spread them over the whole "+
			"5 s (30 s plus a random 0 to 5 s), so that each second of the wave holds a fifth of the pages",
			who, secs3(sure[0].mid()), secs3(sure[len(sure)-1].mid())))
	}
	return check.Passed(figure)
}

// RebuildTTL checks that pages rebuilt after a cold start (Redis restarted
// empty, one reader for each of 500 pages, in waves) get times to live in [30 s, 35 s], spread as
// the warm-up's must be. It catches a warm-up that jitters and a rebuild
// that does not.
func RebuildTTL(h *harness.H, newShop NewShop) check.Verdict {
	s, err := newScene(h, newShop, false)
	if err != nil {
		return fleet.Unreachable(err)
	}
	defer s.Close()
	outs, err := s.readInWaves(events.IDs(rebuilt))
	if err != nil {
		return waitVerdict(err, "the readers of the cold start were")
	}
	if v := allGot(outs, events.IDs(rebuilt)); !v.Pass {
		return check.Failed(v.Figure, "in a cold start: "+v.Message)
	}
	r, err := s.world.Read(h.Context(), nil)
	if err != nil {
		return fleet.Unreachable(err)
	}
	ls := lifetimes(r, s.tap.Wrote(), s.world.Embedded(), s.start)
	if len(ls) < rebuilt {
		return check.Failed(count(len(ls), "key", "keys"), fmt.Sprintf("after a cold start in which every one of %d pages "+
			"had a reader, Redis held %d keys: store every rebuilt page", rebuilt, len(ls)))
	}
	if v := inRange(ls, "the rebuilds of a cold start"); !v.Pass {
		return v
	}
	return spread(ls, "the rebuilds of a cold start")
}

// cold is what a cold start did: the counting checks each judge one part.
type cold struct {
	atGate  int // queries in the database once the readers had settled, held
	most    int // the most queries at once, over the whole scene
	queries map[int]int
	burst   *harness.Crowd[string]
	later   *harness.Crowd[string]
	fail    check.Verdict // set when the scene itself went wrong
}

// coldIDs are the cold start's readers' pages: each of coldPages pages,
// perPage times, interleaved.
func coldIDs(n, per int) []int {
	ids := make([]int, 0, n*per)
	for range per {
		ids = append(ids, events.IDs(n)...)
	}
	return ids
}

// coldStart plays a cold start: Redis is empty, and 60 pages have 3 readers
// each. Every query is held at the gate; once the readers have settled the
// shop's clock moves on by hold, and the queries then in the database are
// counted. Then the gate opens and the scene runs to its end, and a second
// wave of readers, one per page, comes after.
func coldStart(h *harness.H, newShop NewShop) (c cold) {
	s, err := newScene(h, newShop, true)
	if err != nil {
		c.fail = fleet.Unreachable(err)
		return c
	}
	defer s.Close()
	c.burst = s.read(coldIDs(coldPages, perPage))
	if err := s.Elapse(hold); err != nil {
		c.fail = stuckVerdict(err)
		return c
	}
	c.atGate = s.db.Running()
	s.gate.Open()
	if err := s.Drive(c.burst.Done, patience); err != nil {
		c.fail = waitVerdict(err, "the readers of the cold start were")
		return c
	}
	c.later = s.read(events.IDs(coldPages))
	if err := s.Drive(c.later.Done, patience); err != nil {
		c.fail = waitVerdict(err, "the readers after the cold start were")
		return c
	}
	c.most = s.db.Most()
	c.queries = map[int]int{}
	for _, id := range events.IDs(coldPages) {
		c.queries[id] = s.db.Queries(id)
	}
	return c
}

// Once checks that a cold start queries each page once, however many
// readers it has, and that readers after it are served from Redis; and
// that a page slower than a reader's budget is queried once for the
// readers who come one after the other (slowPage). It catches a bound with
// no single-flight in front of it, and a flight forgotten when a reader's
// budget runs out.
func Once(h *harness.H, newShop NewShop) check.Verdict {
	c := coldStart(h, newShop)
	if c.fail.Message != "" {
		return c.fail
	}
	total, worst, who := 0, 0, 0
	for id, q := range c.queries {
		total += q
		if q > worst || q == worst && id < who {
			worst, who = q, id
		}
	}
	figure := fmt.Sprintf("%s for %d pages x %d readers", count(total, "query", "queries"), coldPages, perPage)
	switch {
	case worst > 1:
		return check.Failed(figure, fmt.Sprintf("event %d was queried %d times in one cold start (and a wave of readers "+
			"after it): its readers each rebuilt it. Put single-flight in front of the rebuild, so that a page's readers "+
			"share one query, and look in Redis again once the rebuild has its database slot", who, worst))
	case total < coldPages:
		return check.Failed(figure, "some pages were never queried, yet their readers were answered")
	}
	came, v := slowPage(h, newShop)
	if !v.Pass {
		return v
	}
	return check.Passed(figure + fmt.Sprintf(", and a later wave served from Redis; a page slower than the budget, queried once for %s",
		count(came, "reader", "readers")))
}

// slowPage is Once's scene of a page slower than a reader's budget: its
// query is held at the gate, and slowReaders readers of it come one after
// the other, each once the one before has returned (told to try again).
// They must all wait on the one query: a second query of the page while
// the first still runs is the stampede single-flight is there to stop,
// on the slow page, where it hurts most. It catches a flight forgotten
// when a reader's budget runs out, so that the next reader starts another
// (c08-forget-on-budget). A reader who never returns is budget's to judge:
// came says how many readers came.
func slowPage(h *harness.H, newShop NewShop) (came int, v check.Verdict) {
	const id = 1
	s, err := newScene(h, newShop, true)
	if err != nil {
		return 0, fleet.Unreachable(err)
	}
	defer s.Close()
	for i := range slowReaders {
		r := s.read([]int{id})
		came++
		if err := s.Drive(r.Done, maxBudget); errors.Is(err, errNoBound) {
			break
		} else if err != nil {
			return came, stuckVerdict(err)
		}
		if n := s.db.Running(); n > 1 {
			return came, check.Failed(fmt.Sprintf("%d queries of one page at once", n), fmt.Sprintf("event %d's query was slow "+
				"(held in the database); its reader waited its budget and was told to try again, and %s came "+
				"one after the other, each once the one before had returned: %d queries of the page were in the database "+
				"at once. The first query still runs, and its flight with it: a reader who gives up leaves the flight on, "+
				"and the next reader joins it, or every slow second adds a copy of the slowest query to the pool",
				id, count(i, "more reader", "more readers"), n))
		}
	}
	return came, check.Passed("")
}

// slowReaders is how many readers of the slow page come in slowPage: the
// first starts the query, the others come after a budget each.
const slowReaders = 3

// AtMost checks that the database never sees more than 20 queries at once.
// It catches no bound, a bound per page, a slot taken after the query, and
// a pool larger than the database's.
//
// Then pool+1 pages are missed at one instant, one reader each, taking
// turns one statement each (point.Lockstep): a bound kept in a counter
// that a rebuild reads and then adds to in a second step lets them all
// read 19 before any adds, and 21 queries run at once (c08-slot-load-then-add).
func AtMost(h *harness.H, newShop NewShop) check.Verdict {
	c := coldStart(h, newShop)
	if c.fail.Message != "" && c.most == 0 {
		return c.fail
	}
	figure := fmt.Sprintf("at most %d at once (%d held at the gate)", c.most, c.atGate)
	if c.most > pool {
		return check.Failed(figure, fmt.Sprintf("in a cold start of %d pages the database had %d queries at once, and its pool "+
			"holds %d connections: bound the rebuilds for the whole shop, not per page, and take a slot before the query, "+
			"not after", coldPages, c.most, pool))
	}
	if c.fail.Message != "" {
		return c.fail
	}
	most, v := lockstepMost(h, newShop)
	if !v.Pass {
		return v
	}
	if most > pool {
		return check.Failed(fmt.Sprintf("%d at once in lockstep", most), fmt.Sprintf("%d readers of %d pages missed at one "+
			"instant, taking turns one statement each, and the database had %d queries at once on a pool of %d: the "+
			"bound is looked at in one step and taken in another, so that each rebuild saw a free slot before any took "+
			"one. Take a slot in one step (a semaphore, a buffered channel, or a compare-and-swap)", pool+1, pool+1, most, pool))
	}
	return check.Passed(figure + fmt.Sprintf("; %d pages missed at one instant in lockstep: at most %d", pool+1, most))
}

// lockstepMost is AtMost's second scene: pool+1 pages missed at one
// instant, their queries held at the gate, under point.Lockstep. It
// returns the most queries the database had at once.
func lockstepMost(h *harness.H, newShop NewShop) (int, check.Verdict) {
	s, err := newScene(h, newShop, true)
	if err != nil {
		return 0, fleet.Unreachable(err)
	}
	defer s.Close()
	// Lockstep until the queries are at the gate: what they do after it
	// is not this scene's, and each turn costs a look at the process.
	var burst *harness.Crowd[string]
	v := h.Under(point.Lockstep(false), func() check.Verdict {
		burst = s.read(events.IDs(pool + 1))
		if err := s.Elapse(hold); err != nil {
			return stuckVerdict(err)
		}
		return check.Passed("")
	})
	if !v.Pass {
		return 0, v
	}
	most := s.db.Most()
	s.gate.Open()
	if err := s.Drive(burst.Done, patience); err != nil {
		return most, waitVerdict(err, "the readers of the pages missed at one instant were")
	}
	return max(most, s.db.Most()), check.Passed("")
}

// Parallel checks that, with work for more, the database sees at least 2
// queries at once. It catches one global lock around every rebuild.
func Parallel(h *harness.H, newShop NewShop) check.Verdict {
	c := coldStart(h, newShop)
	if c.fail.Message != "" {
		return c.fail
	}
	figure := fmt.Sprintf("%d at once for %d pages", c.atGate, coldPages)
	if c.atGate < 2 {
		return check.Failed(figure, fmt.Sprintf("in a cold start of %d pages, with every reader settled, the database had %d "+
			"query at a time: one lock around every rebuild makes 2,000 pages take 2,000 queries' time, one after another. "+
			"Bound the rebuilds to the pool (%d at once), not to one", coldPages, c.atGate, pool))
	}
	return check.Passed(figure)
}

// Values checks that every reader of a cold start, and of the wave after
// it, gets its own page. It catches waiters handed an empty page and a
// budget shorter than the rebuild.
func Values(h *harness.H, newShop NewShop) check.Verdict {
	c := coldStart(h, newShop)
	if c.fail.Message != "" {
		return c.fail
	}
	if v := allGot(c.burst.Outcomes(), coldIDs(coldPages, perPage)); !v.Pass {
		return check.Failed(v.Figure, fmt.Sprintf("in a cold start whose queries were held %v: %s", hold, v.Message))
	}
	if v := allGot(c.later.Outcomes(), events.IDs(coldPages)); !v.Pass {
		return check.Failed(v.Figure, "after the cold start: "+v.Message)
	}
	return check.Passed(fmt.Sprintf("%d readers, each with its page", coldPages*(perPage+1)))
}

// allGot checks that the i-th visitor got the page of ids[i].
func allGot(outs []harness.Outcome[string], ids []int) check.Verdict {
	good, first := 0, ""
	note := func(s string) {
		if first == "" {
			first = s
		}
	}
	for i, o := range outs {
		want := events.PageOf(ids[i])
		switch {
		case !o.Returned:
			note(fmt.Sprintf("the reader of event %d never returned", ids[i]))
		case o.Panic != "":
			note(fmt.Sprintf("the reader of event %d panicked: %s", ids[i], o.Panic))
		case o.Err != nil:
			note(fmt.Sprintf("the reader of event %d got an error: %v", ids[i], o.Err))
		case o.Value != want:
			note(fmt.Sprintf("the reader of event %d got %q, not %q", ids[i], o.Value, want))
		default:
			good++
		}
	}
	figure := fmt.Sprintf("%d of %d readers served", good, len(ids))
	if good < len(ids) {
		return check.Failed(figure, first)
	}
	return check.Passed(figure)
}

// Budget checks that a reader who waits past its budget gets a typed "try
// again" error. Every query is held at the gate and never let go: 40 pages
// with 2 readers each, so that 20 pages' queries fill the pool and the
// other 20 wait for a slot. Every reader not itself inside the database
// must return within maxBudget of the shop's clock with an error that says
// when to try again. It catches a wait with no bound and an untyped error.
// A shop that lets every reader into the database, with no bound and no
// single-flight, leaves no reader waiting and no budget to try: it fails.
func Budget(h *harness.H, newShop NewShop) check.Verdict {
	refused, waited, v := coldRefusals(h, newShop)
	if refused == nil {
		return v
	}
	ids := coldIDs(budgetPages, budgetReaders)
	for _, r := range refused {
		var later fleet.Afterer
		switch o := r.Outcome; {
		case o.Panic != "":
			return check.Failed("", fmt.Sprintf("the reader of event %d panicked: %s", ids[r.i], o.Panic))
		case o.Err == nil:
			return check.Failed("", fmt.Sprintf("the reader of event %d got %q, though the database never answered", ids[r.i], o.Value))
		case !errors.As(o.Err, &later):
			return check.Failed("", fmt.Sprintf("the reader of event %d got the error %q: a reader past its budget returns "+
				"a *TryAgain, which says when to try again (its RetryAfter method)", ids[r.i], o.Err))
		case later.RetryAfter() <= 0:
			return check.Failed("", fmt.Sprintf("the *TryAgain says to try again in %v: say when", later.RetryAfter()))
		}
	}
	return check.Passed(fmt.Sprintf("%d readers told to try again after %v", len(refused), waited.Round(time.Millisecond)))
}

// The scene of budget and come-back: 40 pages with 2 readers each.
const budgetPages, budgetReaders = 40, 2

// refusal is a reader of coldRefusals's scene who returned: its place in
// coldIDs, and what it got.
type refusal struct {
	i int
	harness.Outcome[string]
}

// coldRefusals plays budget's scene: every query is held at the gate and
// never let go, and every reader not itself inside the database must
// return within maxBudget of the shop's clock. It returns the readers who
// returned and how long they took; or, when the scene went wrong (a wait
// with no bound, every reader let into the database), no readers and the
// verdict that says so.
func coldRefusals(h *harness.H, newShop NewShop) ([]refusal, time.Duration, check.Verdict) {
	const n, per = budgetPages, budgetReaders
	s, err := newScene(h, newShop, true)
	if err != nil {
		return nil, 0, fleet.Unreachable(err)
	}
	defer s.Close()
	readers := s.read(coldIDs(n, per))
	start := s.clk.Now()
	// A reader running a query itself is held at the gate and cannot
	// return; every other one must.
	err = s.Drive(func() bool { return returned(readers) >= n*per-s.db.Running() }, maxBudget)
	waited := s.clk.Now().Sub(start)
	if errors.Is(err, errNoBound) {
		return nil, 0, check.Failed(fmt.Sprintf("%d of %d readers still waiting after %v", n*per-returned(readers), n*per, maxBudget),
			fmt.Sprintf("the database never answered, and readers still waited after %v of the shop's clock (%s): "+
				"give every wait a budget (a second or so), a wait for a database slot and a wait for another reader's "+
				"rebuild alike (singleflight's Do cannot be left: use DoChan and a select), and past it return a *TryAgain",
				maxBudget, readers.Where()))
	}
	if err != nil {
		return nil, 0, stuckVerdict(err)
	}
	var refused []refusal
	for i, o := range readers.Outcomes() {
		if o.Returned {
			refused = append(refused, refusal{i, o})
		}
	}
	if len(refused) == 0 {
		// Nobody waited, so no budget was tried: the shop let every reader
		// into the database at once, with no bound and no single-flight.
		inside := s.db.Running()
		return nil, 0, check.Failed(fmt.Sprintf("%d of %d readers inside the database at once", inside, n*per), fmt.Sprintf(
			"%d readers of %d pages came, and all %d were let into the database at once, each with a query of its own: none "+
				"waited, so no budget was tried. The database's pool holds %d: bound the rebuilds to it (see at-most), and let a "+
				"page's readers share one query (see once); a reader who waits for either waits a budget, then gets a *TryAgain",
			n*per, n, inside, pool))
	}
	return refused, waited, check.Verdict{}
}

// comeBackInfo: the readers of budget's scene, refused together, are told
// to come back at different moments.
var comeBackInfo = check.Info{ID: "come-back", Name: "readers refused together are told different moments to come back (a jittered Retry-After)",
	Catches: "a fixed Retry-After, one drawn once (per process or per flight) and handed to every reader it refuses, " +
		"and delays from a generator with a fixed seed (two processes hand out the same ones)",
	Apart: fleet.ComeBackApart}

// ComeBack checks that the readers budget's scene refuses (at least 60 of
// its 80, all at the end of one budget) are not told to come back at the
// same moment (fleet.ComeBacks), nor both readers of one page told the same
// (fleet.SharedFlights). It catches a fixed Retry-After, and a delay drawn
// once and shared by every reader of one flight. The grader
// plays it in two processes and compares their delays
// (fleet.ComeBackApart): one generator for the process with a fixed seed.
func ComeBack(h *harness.H, newShop NewShop) check.Verdict {
	refused, _, v := coldRefusals(h, newShop)
	if refused == nil {
		return v
	}
	var errs []error
	for _, r := range refused {
		if r.Panic != "" {
			return check.Failed("", fmt.Sprintf("a reader panicked: %s", r.Panic))
		}
		errs = append(errs, r.Err)
	}
	figure, wrong := fleet.ComeBacks(errs)
	if wrong == "" {
		// The scene's flights are small (two readers a page): a delay
		// drawn per flight spreads over the pages, and only the pages
		// themselves show it.
		ids := coldIDs(budgetPages, budgetReaders)
		byPage := map[int][]error{}
		for _, r := range refused {
			byPage[ids[r.i]] = append(byPage[ids[r.i]], r.Err)
		}
		wrong = fleet.SharedFlights(slices.Collect(maps.Values(byPage)))
	}
	if wrong != "" {
		return check.Failed(figure, "the database never answered; "+wrong)
	}
	pass := check.Passed(figure)
	pass.Drawn = fleet.DrawnDelays(errs)
	return pass
}

// Busy runs a warm-up, readers during it, and a cold start after it, so
// that the race detector sees every access to the shop's state.
func Busy(h *harness.H, newShop NewShop) check.Verdict {
	s, err := newScene(h, newShop, false)
	if err != nil {
		return fleet.Unreachable(err)
	}
	defer s.Close()
	w := s.warm(events.IDs(200))
	during := s.read(coldIDs(300, 1))
	if err := s.Drive(func() bool { return w.Done() && during.Done() }, patience); err != nil {
		return waitVerdict(err, "the readers during the warm-up were")
	}
	if err := s.world.DeleteAll(h.Context()); err != nil {
		return fleet.Unreachable(err)
	}
	after := s.read(coldIDs(150, 3))
	if err := s.Drive(after.Done, patience); err != nil {
		return waitVerdict(err, "the readers of the cold start were")
	}
	for _, c := range []*harness.Crowd[string]{w, during, after} {
		if p := c.Panicked(); p != "" {
			return check.Failed("", "a call panicked: "+p)
		}
	}
	return check.Passed("")
}
