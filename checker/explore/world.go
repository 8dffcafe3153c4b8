package explore

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"stampede/checker/check"
	"stampede/checker/harness"
	"stampede/checker/point"
	"stampede/checker/shelves"
	"stampede/checker/stack"
	"stampede/shop/catalog"
	"stampede/shop/clock"
)

// opening is when every scene's clock starts.
var opening = time.Date(2025, 3, 3, 9, 0, 0, 0, time.UTC)

// world plays one scene against one fresh shop and records what happened
// in the order it happened. Every record is made under mu and numbered by
// tick, so "before" and "after" below are facts about one run, not about
// clocks.
type world struct {
	h     *harness.H
	sc    Scene
	prof  Profile
	clk   *clock.Fake
	shop  shelves.Shop
	ctxs  []*visitCtx
	left  []bool // the driver's: whose context it has ended
	story bool   // keep the lines of the story

	mu      sync.Mutex
	tick    int           // the number of the last record
	now     time.Duration // the scene's time, moved by the driver
	step    int           // how many times the driver has moved it
	rests   int           // how many times the process has been at rest
	queries []*query
	visits  []*visit
	lines   []string
	bad     string // the first invariant broken, as a line of story
}

// query is one query of the database.
type query struct {
	shelf    string
	k        int // among the shelf's queries, from 0
	plan     Plan
	ctx      context.Context
	g        int // the goroutine that runs it
	owner    int // the visitor whose context it runs on, or -1
	start    int // tick
	end      int // tick; 0 while in the database
	startAt  time.Duration
	endAt    time.Duration
	endRest  int   // how many times the process had been at rest when it ended
	err      error // what it returned: its own error, or its context's
	ctxEnded bool  // it ended because its context did
	panicked bool
}

func (q *query) name() string { return fmt.Sprintf("query %d of %s", q.k+1, q.shelf) }

// live reports whether q is in the database with a context that has not
// ended: a query that is going to answer.
func (q *query) live() bool { return q.end == 0 && q.ctx.Err() == nil }

// landed reports whether q has returned the books.
func (q *query) landed() bool {
	return q.end != 0 && !q.ctxEnded && !q.panicked && q.plan.Fault != Fails
}

// visit is what one visitor did.
type visit struct {
	started atomic.Bool
	g       int
	entered bool
	arrived int // tick, once it has called Top
	// arriveRest is how many times the process had been at rest when it
	// arrived.
	arriveRest int
	returned   int // tick, once Top has returned
	leftTick   int // tick at which its context ended, or 0
	waitedOn   *query
	books      []string
	err        error
	panic      string
}

// queryError is the error of a query that fails: one value per query, so
// that a visitor's error tells which query it came from.
type queryError struct{ q *query }

func (e *queryError) Error() string {
	return fmt.Sprintf("database down (%s)", e.q.name())
}

func newWorld(h *harness.H, newShop shelves.New, p Profile, sc Scene, story bool) *world {
	w := &world{h: h, sc: sc, prof: p, clk: clock.NewFake(opening), story: story}
	db := catalog.New(catalog.WithCost(0), catalog.WithClock(still{}), catalog.WithHook(w.hook))
	w.shop = newShop(db)
	far := time.Now().Add(time.Hour)
	for i, v := range sc.Visitors {
		w.ctxs = append(w.ctxs, newVisitCtx(i, v.Deadline, far.Add(v.Leave)))
		w.visits = append(w.visits, &visit{})
	}
	w.left = make([]bool, len(sc.Visitors))
	if s := point.Running(); s != nil && story {
		s.Watch(w.logHold)
	}
	return w
}

// logHold tells, in a story, that the schedule let one goroutine go on
// while others stayed held at their points.
func (w *world) logHold(h point.Hold) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.logf("%s", h.Describe(w.goroutine))
}

// goroutine names the visitor that runs on goroutine g, or says it is
// one of the shop's own. The caller holds mu.
func (w *world) goroutine(g int) string {
	for i, v := range w.visits {
		if v.g == g {
			return fmt.Sprintf("visitor %d", i+1)
		}
	}
	return fmt.Sprintf("a goroutine of the shop (%d)", g)
}

// still is the database's own clock: the explorer's hook spends each
// query's time, so the database adds none, and answers exactly what the
// hook decided.
type still struct{}

func (still) Now() time.Time                             { return opening }
func (still) Sleep(context.Context, time.Duration) error { return nil }

// logf adds a line to the story, stamped with the scene's time.
func (w *world) logf(format string, args ...any) {
	if w.story {
		w.lines = append(w.lines, fmt.Sprintf("%16s  %s", at(w.now), fmt.Sprintf(format, args...)))
	}
}

// fail records a broken invariant; the first one is the verdict.
func (w *world) fail(format string, args ...any) {
	if w.bad != "" {
		return
	}
	w.bad = fmt.Sprintf(format, args...)
	w.logf("BROKEN: %s", w.bad)
}

// who names the visitor that runs on goroutine g, or whose context a
// query runs on.
func (w *world) who(q *query) string {
	for i, v := range w.visits {
		if v.g == q.g && v.entered {
			return fmt.Sprintf("visitor %d (asked at %s)", i+1, at(w.sc.Visitors[i].At))
		}
	}
	if q.owner >= 0 {
		return fmt.Sprintf("a goroutine of the shop, for visitor %d,", q.owner+1)
	}
	return "a goroutine of the shop"
}

// again tells how query q came to start after query o had landed with
// the list. The caller holds mu.
func (w *world) again(q, o *query) string {
	i := slices.IndexFunc(w.visits, func(v *visit) bool { return v.g == q.g && v.entered })
	if i < 0 {
		i = q.owner
	}
	if i < 0 {
		return fmt.Sprintf("%s started %s at %s, after %s had landed with the list at %s", w.who(q), q.name(), at(w.now), o.name(), at(o.endAt))
	}
	v, vis := w.visits[i], w.sc.Visitors[i]
	switch {
	case v.arrived < o.end:
		return fmt.Sprintf("visitor %d asked at %s, waited for %s, which landed with the list at %s, and then queried again",
			i+1, at(vis.At), o.name(), at(o.endAt))
	case vis.At-o.endAt < time.Microsecond:
		return fmt.Sprintf("visitor %d asked at %s, just as %s landed with the list, and queried again",
			i+1, at(vis.At), o.name())
	}
	lost := ""
	for _, f := range w.queries {
		if f.shelf != o.shelf && f.landed() && f.end > o.end && f.end < q.start {
			lost = fmt.Sprintf(", lost when %s was filled at %s", f.shelf, at(f.endAt))
			break
		}
	}
	return fmt.Sprintf("visitor %d asked at %s, after %s had landed with the list at %s, and queried again: the cache did not keep it%s",
		i+1, at(vis.At), o.name(), at(o.endAt), lost)
}

// hook is the database's hook: it records the query, holds it for its
// cost on the scene's clock, and makes it fail or panic as planned.
func (w *world) hook(ctx context.Context, shelf string) error {
	g := point.GoroutineID()
	w.mu.Lock()
	k := 0
	for _, o := range w.queries {
		if o.shelf == shelf {
			k++
		}
	}
	w.tick++
	q := &query{shelf: shelf, k: k, plan: w.sc.plan(shelf, k), ctx: ctx, g: g, owner: visitorOf(ctx),
		start: w.tick, startAt: w.now}
	w.logf("%s begins, for %s (%s)", q.name(), w.who(q), q.plan)
	for _, o := range w.queries {
		switch {
		case o.shelf != shelf:
		case o.landed():
			w.fail("%s (%s: %d queries)", w.again(q, o), shelf, k+1)
		case o.live():
			gone := ""
			if o.owner >= 0 && w.visits[o.owner].leftTick != 0 {
				gone = fmt.Sprintf(" (its visitor %d had given up at %s)", o.owner+1, at(w.sc.Visitors[o.owner].Leave))
			}
			w.fail("%s started %s at %s while %s, begun at %s, was still in the database%s (%s: two queries at once)",
				w.who(q), q.name(), at(w.now), o.name(), at(o.startAt), gone, shelf)
		}
	}
	w.queries = append(w.queries, q)
	w.mu.Unlock()

	err := w.clk.Sleep(ctx, q.plan.Cost)

	w.mu.Lock()
	w.tick++
	q.end, q.endAt, q.endRest = w.tick, w.now, w.rests
	switch {
	case err != nil:
		q.ctxEnded, q.err = true, err
		w.logf("%s ends: its context ended (%v)", q.name(), err)
	case q.plan.Fault == Fails:
		q.err = &queryError{q}
		w.logf("%s fails: %v", q.name(), q.err)
	case q.plan.Fault == Panics:
		q.panicked = true
		w.logf("%s panics", q.name())
	default:
		w.logf("%s lands: the list", q.name())
	}
	w.mu.Unlock()
	if q.panicked {
		panic(fmt.Sprintf("catalog driver: %s panicked", q.name()))
	}
	return q.err
}

// visitFn is what visitor i does: wait for its time, then ask.
func (w *world) visitFn(_ context.Context, i int) (books []string, err error) {
	v, vis := w.visits[i], w.sc.Visitors[i]
	g := point.GoroutineID()
	w.mu.Lock()
	v.g = g
	w.mu.Unlock()
	v.started.Store(true)
	if vis.At > 0 {
		_ = w.clk.Sleep(context.Background(), vis.At)
	}
	w.mu.Lock()
	w.tick++
	v.entered, v.arrived, v.arriveRest = true, w.tick, w.rests
	w.logf("visitor %d asks for %s", i+1, vis.Shelf)
	w.mu.Unlock()
	defer func() {
		r := recover()
		place := ""
		if r != nil {
			place = w.panicPlace(debug.Stack())
		}
		w.leave(i, books, err, r, place)
		books, err = nil, nil
	}()
	return w.shop.Top(w.ctxs[i], vis.Shelf)
}

// panicPlace returns " at cases/case05/shop.go:31" for the innermost
// frame of the implementation in a panicking goroutine's stack.
func (w *world) panicPlace(trace []byte) string {
	for _, g := range stack.Parse(string(trace)) {
		if f, ok := g.In(w.h.Dir()); ok {
			return " at " + stack.Where(f, check.Module)
		}
	}
	return ""
}

// leave records what visitor i got and holds it to the invariants about
// answers.
func (w *world) leave(i int, books []string, err error, r any, place string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	v := w.visits[i]
	w.tick++
	v.returned, v.books, v.err = w.tick, books, err
	switch {
	case r != nil:
		v.panic = fmt.Sprint(r) + place
		w.logf("visitor %d's call panics: %s", i+1, v.panic)
	case err != nil:
		w.logf("visitor %d gets an error: %v", i+1, err)
	default:
		w.logf("visitor %d gets %s", i+1, w.listName(v.books, w.sc.Visitors[i].Shelf))
	}
	w.judge(i)
}

func (w *world) listName(books []string, shelf string) string {
	if slices.Equal(books, catalog.Books(shelf)) {
		return "the list"
	}
	return fmt.Sprintf("%q", books)
}

// judge holds visitor i's answer to the invariants. The caller holds mu.
//
//   - A list is the database's list for the visitor's shelf.
//   - An error is the visitor's own context's error, once it has ended,
//     or the error of a query of its shelf that failed while it was
//     inside Top; a panic, or any error, only when such a query panicked.
//   - A visitor seen waiting, at rest, while one query of its shelf was in
//     the database gets that query's outcome, unless its own context
//     ended first.
func (w *world) judge(i int) {
	v, vis, ctx := w.visits[i], w.sc.Visitors[i], w.ctxs[i]
	name := fmt.Sprintf("visitor %d", i+1)
	var during []*query // queries of the shelf that ended while i was inside, or as it came
	for _, q := range w.queries {
		// A query that ended just before the visitor came, with no rest
		// in between, may still be landing: its flight can still be on the
		// table, and a correct shop may hand its outcome to the newcomer.
		if q.shelf == vis.Shelf && q.end != 0 && (q.end > v.arrived || q.endRest == v.arriveRest) {
			during = append(during, q)
		}
	}
	panicked := slices.ContainsFunc(during, func(q *query) bool { return q.panicked })
	switch {
	case v.panic != "":
		if !w.prof.Faults || !panicked {
			w.fail("%s's call panicked: %s", name, v.panic)
		}
	case v.err != nil:
		if ctx.ended() && errors.Is(v.err, ctx.Err()) || panicked {
			break
		}
		// The query's own failure, or the end of a context of its own
		// (a timeout the shop gave it), not a visitor's.
		shared := slices.ContainsFunc(during, func(q *query) bool {
			return q.err != nil && errors.Is(v.err, q.err) &&
				(!q.ctxEnded || q.owner < 0 || !w.ctxs[q.owner].ended())
		})
		if !shared {
			w.fail("%s", w.badError(i))
		}
	case !slices.Equal(v.books, catalog.Books(vis.Shelf)):
		w.fail("%s got %q, not the database's list for %s", name, v.books, vis.Shelf)
	}
	q := v.waitedOn
	// A visitor whose context ended before it returned may have heard
	// that first: a select with two ready cases picks either.
	if q == nil || q.end == 0 || v.leftTick != 0 && v.leftTick < v.returned || v.panic != "" {
		return
	}
	switch {
	case q.plan.Fault == Fails && !q.ctxEnded && !errors.Is(v.err, q.err):
		w.fail("%s waited for %s, which failed at %s, and did not share its error: it got %s (%s: %d queries)",
			name, q.name(), at(q.endAt), w.got(v, vis.Shelf), q.shelf, w.count(q.shelf))
	case q.panicked && v.err == nil:
		w.fail("%s waited for %s, which panicked at %s, and got %s as if it had worked (%s: %d queries)",
			name, q.name(), at(q.endAt), w.got(v, vis.Shelf), q.shelf, w.count(q.shelf))
	case q.ctxEnded && q.owner >= 0 && q.owner != i && w.ctxs[q.owner].ended():
		w.fail("%s waited for %s, which ran on visitor %d's context and died when visitor %d gave up at %s; %s got %s",
			name, q.name(), q.owner+1, q.owner+1, at(w.sc.Visitors[q.owner].Leave), name, w.got(v, vis.Shelf))
	}
}

// got says what a visitor got.
func (w *world) got(v *visit, shelf string) string {
	if v.err != nil {
		return fmt.Sprintf("%q", v.err.Error())
	}
	return w.listName(v.books, shelf)
}

func (w *world) count(shelf string) int {
	n := 0
	for _, q := range w.queries {
		if q.shelf == shelf {
			n++
		}
	}
	return n
}

// badError says why visitor i's error is not one it may get.
func (w *world) badError(i int) string {
	v, vis, ctx := w.visits[i], w.sc.Visitors[i], w.ctxs[i]
	name := fmt.Sprintf("visitor %d", i+1)
	ctxErr := errors.Is(v.err, context.Canceled) || errors.Is(v.err, context.DeadlineExceeded)
	switch {
	case ctx.ended() && ctxErr:
		how := "was cancelled"
		if vis.Deadline {
			how = "reached its deadline"
		}
		return fmt.Sprintf("%s's context %s at %s, and it returned %q, not its context's error (%v)",
			name, how, at(vis.Leave), v.err.Error(), ctx.Err())
	case ctxErr:
		for _, q := range w.queries {
			if q.shelf == vis.Shelf && q.ctxEnded && q.owner >= 0 && q.owner != i {
				return fmt.Sprintf("%s got %q though its own context was live: %s ran on visitor %d's context, and visitor %d gave up at %s",
					name, v.err.Error(), q.name(), q.owner+1, q.owner+1, at(w.sc.Visitors[q.owner].Leave))
			}
		}
		return fmt.Sprintf("%s got %q though its own context was live", name, v.err.Error())
	}
	// The last query of the shelf that had ended before the visitor came.
	var last *query
	for _, q := range w.queries {
		if q.shelf == vis.Shelf && q.end != 0 && q.end < v.arrived && (last == nil || q.end > last.end) {
			last = q
		}
	}
	if last != nil && last.landed() {
		return fmt.Sprintf("%s asked at %s, after %s had landed with the list at %s, and got an error that no query had: %v",
			name, at(vis.At), last.name(), at(last.endAt), v.err)
	}
	for _, q := range w.queries {
		stale := q.shelf == vis.Shelf && q.end != 0 && q.end < v.arrived && q.endRest < v.arriveRest
		if stale && q.panicked {
			return fmt.Sprintf("%s asked at %s, after %s had panicked at %s, and got an error from it (%v): the failure outlived its query",
				name, at(vis.At), q.name(), at(q.endAt), v.err)
		}
		if stale && q.err != nil && errors.Is(v.err, q.err) {
			return fmt.Sprintf("%s asked at %s, after %s had failed at %s, and got that query's error: the failure outlived its query",
				name, at(vis.At), q.name(), at(q.endAt))
		}
	}
	return fmt.Sprintf("%s got an error that no query of %s had while it waited: %v", name, vis.Shelf, v.err)
}

// allStarted reports whether every visitor's goroutine has begun.
func (w *world) allStarted() bool {
	for _, v := range w.visits {
		if !v.started.Load() {
			return false
		}
	}
	return true
}

// atRest holds the process, at rest, to the invariants about waiting.
//
//   - A visitor whose context has ended is not still waiting, unless it
//     runs a query itself (case 5).
//   - A visitor is not held while its own shelf has no query in the
//     database (cases 1 and 2), or, once its shelf is cached, at all
//     (case 4).
//
// A visitor asleep, or in a select that may hold a timer, may be polling:
// it is given until the end of the scene instead.
func (w *world) atRest() {
	type suspect struct {
		i   int
		why string
	}
	var sus []suspect
	w.mu.Lock()
	w.rests++
	for i, v := range w.visits {
		if !v.entered || v.returned != 0 {
			continue
		}
		vis := w.sc.Visitors[i]
		var live, inDB []*query
		cachedAt := ""
		for _, q := range w.queries {
			if q.shelf != vis.Shelf {
				continue
			}
			if q.live() {
				live = append(live, q)
			}
			if q.end == 0 {
				inDB = append(inDB, q)
			}
			if q.landed() && q.end < v.arrived {
				cachedAt = at(q.endAt)
			}
		}
		if len(live) == 1 {
			v.waitedOn = live[0]
		}
		runs := slices.ContainsFunc(inDB, func(q *query) bool { return q.g == v.g || q.owner == i })
		switch {
		case w.prof.Leave && v.leftTick != 0 && !runs:
			how := "gave up"
			if vis.Deadline {
				how = "reached its deadline"
			}
			sus = append(sus, suspect{i, fmt.Sprintf("visitor %d %s at %s and kept waiting", i+1, how, at(vis.Leave))})
		case w.prof.Apart == ApartAll && len(inDB) == 0:
			sus = append(sus, suspect{i, fmt.Sprintf("visitor %d asked for %s at %s and was held while no query of %s was in the database (in it: %s)",
				i+1, vis.Shelf, at(vis.At), vis.Shelf, w.others(vis.Shelf))})
		case w.prof.Apart >= ApartHits && cachedAt != "":
			sus = append(sus, suspect{i, fmt.Sprintf("visitor %d asked for %s at %s, cached since %s, and was held (in the database: %s)",
				i+1, vis.Shelf, at(vis.At), cachedAt, w.others(vis.Shelf))})
		}
	}
	w.mu.Unlock()
	if len(sus) == 0 {
		return
	}
	gs := map[int]stack.Goroutine{}
	for _, g := range stack.All() {
		gs[g.ID] = g
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, s := range sus {
		g, ok := gs[w.visits[s.i].g]
		// Not parked (a poller's timer woke it since the rest) or asleep
		// in a timed wait: it may yet go on, so it is judged at the end.
		if !ok || !stack.Parked(g.State) || stack.Timed(g.State) {
			continue
		}
		where := "in " + g.State
		if f, mine := g.In(w.h.Dir()); mine {
			where = "stuck at " + stack.Where(f, check.Module) + " in " + g.State
		}
		w.fail("%s: %s", s.why, where)
	}
}

// others names the queries of other shelves in the database. The caller
// holds mu.
func (w *world) others(shelf string) string {
	var names []string
	for _, q := range w.queries {
		if q.shelf != shelf && q.end == 0 {
			names = append(names, q.name())
		}
	}
	if len(names) == 0 {
		return "nothing"
	}
	return strings.Join(names, " and ")
}

// next returns the scene's next event: a sleeper's wake-up or a context's
// end.
func (w *world) next() (time.Duration, bool) {
	t, ok := w.clk.Next()
	next := t.Sub(opening)
	for i, v := range w.sc.Visitors {
		if v.Leave > 0 && !w.left[i] && (!ok || v.Leave < next) {
			next, ok = v.Leave, true
		}
	}
	return next, ok
}

// fire moves the scene to t: the contexts due end, then the clock wakes
// its sleepers.
func (w *world) fire(t time.Duration) {
	w.mu.Lock()
	w.now = t
	w.step++
	var ending []int
	for i, v := range w.sc.Visitors {
		if v.Leave > 0 && !w.left[i] && v.Leave <= t {
			w.left[i] = true
			w.tick++
			w.visits[i].leftTick = w.tick
			ending = append(ending, i)
			if v.Deadline {
				w.logf("visitor %d reaches its deadline", i+1)
			} else {
				w.logf("visitor %d gives up (its context is cancelled)", i+1)
			}
		}
	}
	w.mu.Unlock()
	for _, i := range ending {
		w.ctxs[i].end()
	}
	w.clk.Set(opening.Add(t))
}

// result is what playing a scene found.
type result struct {
	bad   string         // the first invariant broken, or ""
	stuck *harness.Stuck // code that never stopped running
	lines []string       // the story, when asked for
}

// play plays a scene on a fresh shop.
func play(h *harness.H, newShop shelves.New, p Profile, sc Scene, story bool) result {
	w := newWorld(h, newShop, p, sc, story)
	crowd := harness.Visit(h, len(sc.Visitors), w.visitFn)
	res := w.drive(crowd)
	for _, c := range w.ctxs {
		c.end()
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.bad != "" {
		res.bad = w.bad // the first rule broken, not its consequences
	}
	res.lines = w.lines
	return res
}

// drive moves the scene's clock from rest to rest until nothing is left
// to happen, then waits for every visitor.
func (w *world) drive(crowd *harness.Crowd[[]string]) result {
	next := func() (time.Time, bool) {
		t, ok := w.next()
		return opening.Add(t), ok
	}
	d := harness.Driver{
		H: w.h,
		Rest: func() error {
			if err := w.h.Quiet(w.allStarted); err != nil {
				return err
			}
			w.atRest()
			return nil
		},
		Now:  w.clk.Now,
		Next: next,
		MoveTo: func(at time.Time) error {
			t := at.Sub(opening)
			w.fire(t)
			// Events less than a microsecond apart: a yield per
			// nanosecond, without waiting for rest.
			for {
				t2, ok := w.next()
				if !ok || t2-t >= time.Microsecond {
					return nil
				}
				for range int(t2 - t) {
					runtime.Gosched()
				}
				w.fire(t2)
				t = t2
			}
		},
	}
	nothingLeft := func() bool { _, ok := w.next(); return !ok }
	if err := d.Drive(nothingLeft, time.Hour); err != nil {
		// The process did not come to rest within the hang bound:
		// that is the harness's "stuck", said as every check says it.
		var st *harness.Stuck
		if errors.As(err, &st) {
			return result{stuck: st}
		}
		return stuckResult(err, crowd)
	}
	if !crowd.Done() && deadlocked() {
		return result{bad: fmt.Sprintf("%d visitors never returned: %s", len(crowd.Outcomes())-returned(crowd), crowd.Where())}
	}
	if err := crowd.Wait(); err != nil {
		return stuckResult(err, crowd)
	}
	if err := w.h.Quiet(func() bool { return true }); err != nil {
		return stuckResult(err, crowd)
	}
	return result{}
}

// stuckResult turns an error from the harness into a result: code that
// never stops running is stuck, and visitors that wait for ever break
// the invariant that every visitor returns.
func stuckResult(err error, crowd *harness.Crowd[[]string]) result {
	var st *harness.Stuck
	if errors.As(err, &st) && st.Busy {
		return result{stuck: st}
	}
	n := 0
	for _, o := range crowd.Outcomes() {
		if !o.Returned {
			n++
		}
	}
	// Where names this scene's visitors only: visitors left stuck by the
	// scenes before (while shrinking) are parked in the same process.
	msg := fmt.Sprintf("%d visitors never returned: %s", n, crowd.Where())
	if errors.As(err, &st) && st.Hint != "" {
		msg += " (likely " + st.Hint + ")"
	}
	return result{bad: msg}
}

// deadlocked reports whether, in a snapshot, every goroutine but the
// caller's is parked where no timer can wake it. The harness's own
// watchers (a story's watchdog) are left out: they touch nothing. The
// caller has seen the process at rest with no event left to fire.
func deadlocked() bool {
	gs := stack.All()
	for _, g := range gs[min(1, len(gs)):] { // the caller comes first
		if !harness.Watcher(g) && (!g.Blocked() || stack.Timed(g.State)) {
			return false
		}
	}
	return true
}

// returned counts the crowd's visitors that have returned.
func returned(c *harness.Crowd[[]string]) int {
	n := 0
	for _, o := range c.Outcomes() {
		if o.Returned {
			n++
		}
	}
	return n
}
