package case10

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"stampede/checker/check"
	"stampede/checker/explore"
	"stampede/checker/fleet"
	"stampede/checker/harness"
	"stampede/shop/catalog"
)

// The explorer of case 10 plays random scenes of reads and writes on a
// fleet: two to four instances, one to three books (some of them cached
// before the scene begins), readers who arrive in bursts, in waves on the
// moments a read of the row lands, one by one, or just after a write has
// returned (one on each of several instances), writers whose transaction
// takes 0 to 20 ms and who arrive before, during or just as a read lands,
// reads of the row that cost 0 to 150 ms each and now and then fail, and
// readers whose context is cancelled or reaches its deadline on the
// shops' clock. One scene in six stalls the first read of a book for
// 10.5 s, past any lease, so that a slow filler comes back after a write
// and after another instance took over. Every scene is held to invariants
// that every correct answer keeps under every schedule:
//
//  1. every reader gets a price its book has had, and not an old one: no
//     older than the price of the last write that returned before the
//     reader arrived, and no newer than what was committed when it
//     returned;
//  2. a reader gets an error only when its own context ended, when a read
//     of its book failed while it waited (failed by the scene, or given up
//     by the shop's own deadline, not by another visitor's leaving), or
//     after waiting at least a read's time (0.2 s: a budget must outlast a
//     healthy read);
//  3. never two reads of one book's row at once, unless a write of the
//     book committed and returned meanwhile (its delete ends the lease) or
//     the second began at least 0.2 s after the first (a lease need not
//     outlive a read by more);
//  4. every key has a time to live, after every command that may write and
//     when the scene ends;
//  5. every visitor returns, within 15 s of the shops' clock, and every
//     write succeeds;
//  6. once the scene is over, a visitor on a new instance gets each book's
//     committed price (nothing stale survived), the next visitor after it
//     is served from Redis without reading the row (the fill was kept),
//     and a visitor on every instance of the scene gets it too.
//
// Why none can fail a right answer. A read of the row returns the row as
// its query began, so a price is always one the book had. A write's delete
// lands before the write returns; a reader who arrives at a later instant
// of the shops' clock (the clock moves only once the process is at rest)
// finds Redis without the old price, and any fill that read the row before
// the commit is refused by the lease the delete ended (or by the version,
// or the epoch, in the right answers written otherwise). A right answer
// waits only for a lease, and gives up only past a budget, which the
// lease-coalesces check already requires to outlast a 0.2 s read. A lease
// is taken at the instant its holder's read begins (nothing in a right
// answer sleeps between them), outlives a read of up to 0.2 s (the scenes'
// reads cost at most 0.15 s, and the clock's grain is 10 ms), and is ended
// early only by a write's delete, which rule 3 excuses. Writers' contexts
// never end, so no delete is lost; Redis never fails. Nothing in rule 6
// runs at the same time as anything else.

// exploreScenes10 is how many scenes a run plays. Each builds a fleet on
// a fresh embedded Redis.
const exploreScenes10 = 24

// The explorer's bounds.
const (
	// xms is the scenes' unit of time.
	xms = time.Millisecond
	// leaseFloor is the shortest lease a right answer may take: a lease
	// must outlive a read of the row (rebuild). Two reads that begin this
	// far apart may overlap.
	leaseFloor = rebuild
	// stall is the cost of a slow filler's read: past any lease.
	stall = maxLease + 500*xms
	// visitorBound is how long a visitor may stay in the shop: the longest
	// lease it may wait out, and a few seconds more.
	visitorBound = maxLease + 5*time.Second
)

// errRead is the error of a read of the row that the scene makes fail.
var errRead = errors.New("the database did not answer (the explorer's failure)")

// ExploreInfo describes the explorer's check for case 10.
var ExploreInfo = check.Info{
	ID:     "explore",
	Scenes: true,
	Name: "random scenes of reads and writes keep every invariant (several books and instances, writes during and just as a " +
		"fill lands, readers after a write on every instance, deadlines, failed reads, a filler slower than any lease)",
	Catches: "bugs no single scene stages: an instance's own copy serving the old price after another instance's write, " +
		"one version or lease key shared by every book, a reader whose deadline passes reading the row beside the lease's " +
		"holder, and the stale sets and stampedes of the hand-built checks in schedules they do not stage",
}

// xvisitor is one visitor of a scene: a reader, or a writer when Price is
// set.
type xvisitor struct {
	Shop  int
	Book  string
	At    time.Duration // when it comes, from the scene's start
	Price int           // a writer's new price; 0 for a reader
	Txn   time.Duration // a writer's transaction, before its commit
	// Leave is when a reader's context ends (0: never), as a deadline
	// when Deadline is set, else as a cancel.
	Leave    time.Duration
	Deadline bool
}

func (v xvisitor) writer() bool { return v.Price != 0 }

// xread is what one read of a book's row does.
type xread struct {
	Cost  time.Duration
	Fails bool
}

// xscene is one random scene of case 10.
type xscene struct {
	Seed     uint64
	Shops    int
	Books    []string
	Warm     []string // books cached before the scene begins
	Visitors []xvisitor
	Reads    map[string][]xread // book -> its reads, in order
}

// drawScene10 returns the scene of a seed.
func drawScene10(seed uint64) xscene {
	r := rand.New(rand.NewPCG(seed, 0xca5e10))
	sc := xscene{Seed: seed, Shops: 2 + r.IntN(3), Reads: map[string][]xread{}}
	books := catalog.Priced()
	r.Shuffle(len(books), func(i, j int) { books[i], books[j] = books[j], books[i] })
	sc.Books = books[:1+explore.Pick(r, 15, 50, 35)]
	main := sc.Books[0]
	for i, b := range sc.Books {
		if (i == 0 && r.IntN(8) == 0) || (i > 0 && r.IntN(2) == 0) {
			sc.Warm = append(sc.Warm, b)
		}
		for k := range 4 {
			costs := []time.Duration{0, 10 * xms, 50 * xms, 100 * xms, 150 * xms}
			rd := xread{Cost: costs[explore.Pick(r, 10, 15, 25, 25, 25)]}
			if k == 0 && b == main {
				rd.Cost = costs[2+r.IntN(3)] // long enough for a write to land in it
			}
			rd.Fails = r.IntN(8) == 0
			sc.Reads[b] = append(sc.Reads[b], rd)
		}
	}
	stalled := r.IntN(6) == 0
	if stalled {
		sc.Reads[main][0] = xread{Cost: stall}
		for k := 1; k < len(sc.Reads[main]); k++ {
			sc.Reads[main][k] = xread{Cost: 150 * xms}
		}
	}
	first := sc.Reads[main][0].Cost // when the main book's first fill lands, if nothing else happens
	if stalled {
		first = 150 * xms
	}
	// The main book's first reader: the filler the writes race.
	sc.Visitors = append(sc.Visitors, xvisitor{Shop: r.IntN(sc.Shops), Book: main})

	// The writes: one or two, mostly of the main book, before, during or
	// just as its first read lands.
	var writes []xvisitor
	nw := explore.Pick(r, 15, 55, 30)
	prices := map[string]int{}
	next := func(b string) int { // a price the book has not had
		if prices[b] == 0 {
			row, _ := catalog.New().Peek(b)
			prices[b] = row.Price
		}
		prices[b] += 100
		return prices[b]
	}
	for range nw {
		b := main
		if r.IntN(4) == 0 {
			b = sc.Books[r.IntN(len(sc.Books))]
		}
		w := xvisitor{Shop: r.IntN(sc.Shops), Book: b, Price: next(b),
			Txn: []time.Duration{0, 3 * xms, 10 * xms, 20 * xms, 40 * xms}[r.IntN(5)]}
		w.At = []time.Duration{0, first / 2, first / 2, first, first + 10*xms, time.Duration(r.IntN(30)) * 10 * xms}[r.IntN(6)]
		writes = append(writes, w)
	}
	if stalled {
		// A second write once the slow filler's lease is long gone, and a
		// reader who takes the lease after it and is still reading when
		// the slow filler comes back.
		writes = append(writes, xvisitor{Shop: r.IntN(sc.Shops), Book: main, Price: next(main), At: maxLease + 200*xms})
		sc.Visitors = append(sc.Visitors,
			xvisitor{Shop: r.IntN(sc.Shops), Book: main, At: stall - 100*xms},
			xvisitor{Shop: r.IntN(sc.Shops), Book: main, At: stall + 100*xms})
	}

	// The readers.
	n := 1 + r.IntN(8)
	pattern := r.IntN(4)
	waves := []time.Duration{0, first, first + 10*xms, 2 * first}
	for i := range n {
		v := xvisitor{Shop: r.IntN(sc.Shops), Book: sc.Books[r.IntN(len(sc.Books))]}
		if r.IntN(3) != 0 {
			v.Book = main
		}
		switch pattern {
		case 0: // a burst, a straggler now and then
			if r.IntN(4) == 0 {
				v.At = time.Duration(r.IntN(30)) * 10 * xms
			}
		case 1: // waves, on the moments a fill lands
			v.At = waves[r.IntN(len(waves))]
		case 2: // one by one
			v.At = time.Duration(i) * time.Duration(1+r.IntN(4)) * 20 * xms
		default:
			v.At = time.Duration(r.IntN(40)) * 10 * xms
		}
		if r.IntN(3) == 0 {
			v.Leave = v.At + []time.Duration{0, 25 * xms, 75 * xms, 125 * xms}[r.IntN(4)]
			v.Deadline = r.IntN(2) == 0
		}
		sc.Visitors = append(sc.Visitors, v)
	}
	if first >= 50*xms && !slices.Contains(sc.Warm, main) {
		// A reader whose deadline passes while the first filler reads.
		sc.Visitors = append(sc.Visitors, xvisitor{Shop: r.IntN(sc.Shops), Book: main, At: 10 * xms, Leave: 35 * xms, Deadline: true})
	}
	if !stalled {
		// Once the fills have landed, a reader on every instance, and
		// then a write: every instance has seen the price the write
		// replaces.
		at := 700 * xms
		for shop := range sc.Shops {
			sc.Visitors = append(sc.Visitors, xvisitor{Shop: shop, Book: main, At: at})
		}
		writes = append(writes, xvisitor{Shop: r.IntN(sc.Shops), Book: main, Price: next(main), At: at + 20*xms,
			Txn: []time.Duration{0, 3 * xms, 10 * xms}[r.IntN(3)]})
	}
	if len(sc.Books) > 1 {
		// The last book is first asked for once every write has returned:
		// its first fill comes after another book's write.
		late := sc.Books[len(sc.Books)-1]
		sc.Warm = slices.DeleteFunc(sc.Warm, func(b string) bool { return b == late })
		var end time.Duration
		for _, w := range writes {
			end = max(end, w.At+w.Txn)
		}
		for i, v := range sc.Visitors {
			if v.Book == late {
				sc.Visitors[i].At += end + 50*xms
				if v.Leave > 0 {
					sc.Visitors[i].Leave += end + 50*xms
				}
			}
		}
	}
	for _, w := range writes {
		if w.At >= 20*xms && r.IntN(2) == 0 {
			// Readers of its book on every instance just before it, so
			// that each has seen the old price.
			for shop := range sc.Shops {
				sc.Visitors = append(sc.Visitors, xvisitor{Shop: shop, Book: w.Book, At: w.At - 10*xms})
			}
		}
		sc.Visitors = append(sc.Visitors, w)
		if w.Txn >= 10*xms && r.IntN(3) != 0 {
			// A reader while the write is open.
			sc.Visitors = append(sc.Visitors, xvisitor{Shop: r.IntN(sc.Shops), Book: w.Book, At: w.At + w.Txn/2})
		}
		// After it, readers of its book on several instances: each must
		// see the new price, or a newer one.
		after := w.At + w.Txn + time.Duration(1+r.IntN(3))*10*xms
		for shop := range sc.Shops {
			if r.IntN(3) != 0 {
				sc.Visitors = append(sc.Visitors, xvisitor{Shop: shop, Book: w.Book, At: after + time.Duration(r.IntN(2))*50*xms})
			}
		}
	}
	return sc
}

func (sc xscene) clone() xscene {
	c := sc
	c.Books = slices.Clone(sc.Books)
	c.Warm = slices.Clone(sc.Warm)
	c.Visitors = slices.Clone(sc.Visitors)
	c.Reads = map[string][]xread{}
	for b, rs := range sc.Reads {
		c.Reads[b] = slices.Clone(rs)
	}
	return c
}

// read returns what a book's k-th read (from 0) does; past the drawn
// ones, reads cost 10 ms and work.
func (sc xscene) read(book string, k int) xread {
	if rs := sc.Reads[book]; k < len(rs) {
		return rs[k]
	}
	return xread{Cost: 10 * xms}
}

// String describes the scene in a line or two.
func (sc xscene) String() string {
	var vs []string
	for i, v := range sc.Visitors {
		vs = append(vs, v.short(i))
	}
	s := fmt.Sprintf("%d instances, %d visitors (%s)", sc.Shops, len(sc.Visitors), strings.Join(vs, "; "))
	if len(sc.Warm) > 0 {
		s += fmt.Sprintf("; cached before the scene: %s", strings.Join(sc.Warm, ", "))
	}
	for _, b := range sc.Books {
		used := false
		for _, v := range sc.Visitors {
			used = used || v.Book == b
		}
		if !used {
			continue
		}
		var rs []string
		for _, rd := range sc.Reads[b] {
			rs = append(rs, rd.String())
		}
		s += fmt.Sprintf("; reads of %s take %s", b, strings.Join(rs, ", then "))
	}
	return s
}

func (rd xread) String() string {
	s := fmt.Sprint(rd.Cost)
	if rd.Fails {
		s += " and fail"
	}
	return s
}

// short says what a visitor does in a few words.
func (v xvisitor) short(i int) string {
	if v.writer() {
		return fmt.Sprintf("%d: shop-%d sets %s to %s at %v (transaction %v)", i+1, v.Shop+1, v.Book, cents(v.Price), v.At, v.Txn)
	}
	s := fmt.Sprintf("%d: shop-%d reads %s at %v", i+1, v.Shop+1, v.Book, v.At)
	if v.Leave > 0 {
		how := "cancelled"
		if v.Deadline {
			how = "deadline"
		}
		s += fmt.Sprintf(", %s at %v", how, v.Leave)
	}
	return s
}

// xrow is one read of a row during a scene.
type xrow struct {
	book       string
	k          int
	who        int           // the visitor, or -1 when its context is not one of the scene's
	start, end time.Duration // end is -1 while it runs
	failed     bool
	injected   bool // failed because the scene said so, not given up by its context
}

// xcommit is one committed write.
type xcommit struct {
	book    string
	at      time.Duration
	price   int
	version int64
}

// xvisit is what one visitor did: written by its own goroutine, read once
// the crowd is done.
type xvisit struct {
	arrived, returned time.Duration
	ended             bool  // its own context had ended when it returned
	ceiling           int64 // the book's committed version when it returned
	back              bool  // it returned
}

// xworld plays one scene.
type xworld struct {
	s  *scene
	sc xscene
	t0 time.Time
	*explore.Record

	mu      sync.Mutex
	main    bool // the scene proper, between the warm-up and the probes
	counts  map[string]int
	rows    []*xrow
	commits []xcommit
	pending string // the book of a commit not yet read back
	visits  []*xvisit
}

// now is the scene's time.
func (w *xworld) now() time.Duration { return w.s.Clock.Now().Sub(w.t0) }

// readHook spends a read's cost on the shops' clock, after the row has
// been read, and fails it when the scene says so.
func (w *xworld) readHook(ctx context.Context, book string) error {
	w.mu.Lock()
	if !w.main {
		w.mu.Unlock()
		return nil
	}
	k := w.counts[book]
	w.counts[book]++
	rd := &xrow{book: book, k: k, who: explore.VisitorOf(ctx), start: w.now(), end: -1}
	w.rows = append(w.rows, rd)
	w.mu.Unlock()
	plan := w.sc.read(book, k)
	w.Logf("read %d of %s begins (%s)%s", k+1, book, plan, w.by(rd.who))
	err := w.s.Clock.Sleep(ctx, plan.Cost)
	w.mu.Lock()
	rd.end = w.now()
	rd.failed = err != nil || plan.Fails
	rd.injected = err == nil && plan.Fails
	w.mu.Unlock()
	switch {
	case err != nil:
		w.Logf("read %d of %s abandoned: its context ended", k+1, book)
		return err
	case plan.Fails:
		w.Logf("read %d of %s fails", k+1, book)
		return errRead
	}
	w.Logf("read %d of %s lands", k+1, book)
	return nil
}

// by names the visitor a read runs for, for the timeline.
func (w *xworld) by(who int) string {
	if who < 0 || who >= len(w.sc.Visitors) {
		return ""
	}
	return fmt.Sprintf(", for visitor %d", who+1)
}

// commitHook spends a write's transaction on the shops' clock, just before
// its commit, and notes the commit before it (commits take turns, so the
// one before has landed).
func (w *xworld) commitHook(ctx context.Context, book string) error {
	w.mu.Lock()
	if !w.main {
		w.mu.Unlock()
		return nil
	}
	w.settle()
	who := explore.VisitorOf(ctx)
	w.mu.Unlock()
	var txn time.Duration
	if who >= 0 && who < len(w.sc.Visitors) {
		txn = w.sc.Visitors[who].Txn
	}
	if err := w.s.Clock.Sleep(ctx, txn); err != nil {
		return err
	}
	w.mu.Lock()
	w.pending = book
	w.commits = append(w.commits, xcommit{book: book, at: w.now()})
	w.mu.Unlock()
	w.Logf("a write of %s commits", book)
	return nil
}

// settle reads back the last commit's row. Called with mu held.
func (w *xworld) settle() {
	if w.pending == "" {
		return
	}
	row, _ := w.s.db.Peek(w.pending)
	c := &w.commits[len(w.commits)-1]
	c.price, c.version = row.Price, row.Version
	w.pending = ""
}

// version returns the version at which book had price, if it ever had it.
func (w *xworld) version(book string, price int, first catalog.Row) (int64, bool) {
	if price == first.Price {
		return first.Version, true
	}
	for _, c := range w.commits {
		if c.book == book && c.price == price {
			return c.version, true
		}
	}
	return 0, false
}

// playScene10 plays a scene on a fresh fleet.
func playScene10(h *harness.H, newShop NewShop, sc xscene, story bool) explore.Played {
	wd, err := fleet.Open(h.Context(), fleet.ServerURL())
	if err != nil {
		return explore.Played{Err: fleet.Unusable(err)}
	}
	w := &xworld{sc: sc, counts: map[string]int{}}
	w.Record = explore.NewRecord(w.now, explore.Width(9), story)
	s := &scene{Stage: fleet.Stage{H: h, World: wd, Clock: fleet.NewClock(), Quick: true}, reads: fleet.HoldCalls(), commits: fleet.HoldCalls(), newShop: newShop}
	s.db = catalog.New(catalog.WithCost(0), catalog.WithReadHook(w.readHook), catalog.WithCommitHook(w.commitHook))
	w.s = s
	sceneCtx, endScene := context.WithCancel(h.Context())
	defer func() {
		endScene()
		s.Close()
	}()
	if wd.Embedded() {
		// Every goroutine of the scene waits inside the process: the
		// scheduler's counts can tell rest (harness.H.CountsDecideRest).
		defer h.CountsDecideRest()()
	}

	// Every row starts at version 9, so that the first write makes it 10:
	// "9" sorts after "10" as text.
	first := map[string]catalog.Row{}
	for _, b := range catalog.Priced() {
		for {
			row, _ := s.db.Peek(b)
			if row.Version >= 9 {
				first[b] = row
				break
			}
			if _, err := s.db.SetPrice(h.Context(), b, row.Price); err != nil {
				return explore.Played{Err: fleet.Unusable(err)}
			}
		}
	}
	for range sc.Shops {
		s.add()
	}
	untimedSeen := s.World.WatchTTLs(s.taps)
	w.t0 = s.Clock.Now()

	// The books cached before the scene.
	for _, b := range sc.Warm {
		c := s.visit(1, func(ctx context.Context) (int, error) { return s.shops[0].Price(ctx, b) })
		if res, done := w.settled(s.Drive(c.Done, patience), c, "a visitor warming "+b); done {
			return res
		}
		if o := c.Outcomes()[0]; o.Err != nil || o.Panic != "" || o.Value != first[b].Price {
			w.Fail("before the scene, with nothing else going on, a visitor of %s got %s, not %s", b, describe(o), cents(first[b].Price))
			return w.Played()
		}
	}
	w.t0 = s.Clock.Now()
	w.Logf("the scene begins")
	w.mu.Lock()
	w.main = true
	w.mu.Unlock()

	// The scene.
	w.visits = make([]*xvisit, len(sc.Visitors))
	for i := range w.visits {
		w.visits[i] = &xvisit{}
	}
	var started sync.WaitGroup
	started.Add(len(sc.Visitors))
	crowd := harness.Visit(h, len(sc.Visitors), func(_ context.Context, i int) (int, error) {
		v, rec := sc.Visitors[i], w.visits[i]
		ctx, end, _ := explore.NewContext(i, v.Deadline)
		if v.Leave > 0 {
			go func() {
				if s.Clock.Sleep(sceneCtx, v.Leave) == nil {
					w.Logf("visitor %d's context ends (%s)", i+1, map[bool]string{true: "deadline", false: "cancel"}[v.Deadline])
					end()
				}
			}()
		}
		started.Done()
		if err := s.Clock.Sleep(sceneCtx, v.At); err != nil {
			return 0, err
		}
		rec.arrived = w.now()
		price, err := fleet.Ask(ctx, s.shops[v.Shop], i, v.Shop, v.Book, v.writer(), v.Price, w.Logf)
		rec.returned = w.now()
		rec.ended = ctx.Err() != nil
		row, _ := s.db.Peek(v.Book)
		rec.ceiling = row.Version
		rec.back = true
		return price, err
	})
	s.crowds = append(s.crowds, crowd)
	started.Wait()
	if res, done := w.settled(s.Drive(crowd.Done, patience), crowd, "visitors"); done {
		return res
	}
	endScene()
	w.mu.Lock()
	w.main = false
	w.settle()
	w.mu.Unlock()

	w.judgeVisitors(crowd, first)
	w.judgeRows()
	for _, bad := range wd.Timeless(h.Context(), untimedSeen) {
		w.Fail("%s", bad)
	}
	if !w.Broken() {
		w.probe(first)
	}
	return w.Played()
}

// settled turns what Drive returned into a result when the scene cannot go
// on: visitors still waiting, stuck, or a machine too busy to come to rest.
func (w *xworld) settled(err error, c *harness.Crowd[int], who string) (explore.Played, bool) {
	switch {
	case err == nil:
		return explore.Played{}, false
	case errors.Is(err, fleet.ErrNoBound):
		w.Fail("%s still waiting after %v of the shops' clock: %s", who, patience, c.Where())
	case w.Unrested(err):
	default:
		w.Fail("%s never finished: %v", who, err)
	}
	return w.Played(), true
}

// judgeVisitors holds every visitor to rules 1, 2 and 5.
func (w *xworld) judgeVisitors(crowd *harness.Crowd[int], first map[string]catalog.Row) {
	for i, o := range crowd.Outcomes() {
		v, rec := w.sc.Visitors[i], w.visits[i]
		who := fmt.Sprintf("visitor %d (shop-%d, %s at %v)", i+1, v.Shop+1, v.Book, rec.arrived)
		took := rec.returned - rec.arrived
		switch {
		case o.Panic != "":
			w.Fail("%s: the call panicked: %s", who, o.Panic)
			continue
		case took > visitorBound:
			w.Fail("%s returned only after %v of the shops' clock: a wait needs a bound (a lease lives at most %v, a budget a second or so)",
				who, took, maxLease)
		case v.writer() && o.Err != nil:
			w.Fail("%s: the write got the error %q, with nothing failing in Redis or the database", who, o.Err)
		case v.writer():
		case o.Err != nil && !w.mayFail(i, o.Err, took):
			w.Fail("%s got the error %q after %v of the shops' clock: its context had not ended and no read of %s had failed, and a visitor "+
				"may give up only after waiting at least a read's time (%v) for another's fill", who, o.Err, took, v.Book, rebuild)
		case o.Err != nil:
		default:
			w.judgePrice(i, o.Value, first[v.Book])
		}
	}
}

// mayFail reports whether visitor i may return err: its own context
// ended, a read of its book failed while it was in the shop (one the
// scene failed, or one the shop gave up by a deadline of its own), or it
// waited at least a read's time.
func (w *xworld) mayFail(i int, err error, took time.Duration) bool {
	v, rec := w.sc.Visitors[i], w.visits[i]
	if rec.ended || took >= rebuild {
		return true
	}
	return slices.ContainsFunc(w.rows, func(r *xrow) bool {
		if r.book != v.Book || !r.failed || r.end < rec.arrived || r.end > rec.returned {
			return false
		}
		if r.injected {
			return errors.Is(err, errRead)
		}
		// A read the shop gave up by its own deadline is news of a
		// stuck database, which a visitor who shared it may be told;
		// one given up because the visitor who started it left or ran
		// out of time, at that very moment, is not the others' news.
		return !w.leftAt(r.who, r.end)
	})
}

// leftAt reports whether visitor i's own context had ended when it
// returned, at t.
func (w *xworld) leftAt(i int, t time.Duration) bool {
	return i >= 0 && i < len(w.visits) && w.visits[i].ended && w.visits[i].returned == t
}

// judgePrice holds the price visitor i got to rule 1.
func (w *xworld) judgePrice(i, price int, first catalog.Row) {
	v, rec := w.sc.Visitors[i], w.visits[i]
	who := fmt.Sprintf("visitor %d (shop-%d, %s at %v)", i+1, v.Shop+1, v.Book, rec.arrived)
	got, ok := w.version(v.Book, price, first)
	if !ok {
		what := "a price " + v.Book + " never had"
		for _, b := range catalog.Priced() {
			if row, _ := w.s.db.Peek(b); b != v.Book && row.Price == price {
				what = "the price of " + b + ", another book"
			}
		}
		w.Fail("%s got %s, %s", who, cents(price), what)
		return
	}
	if got > rec.ceiling {
		w.Fail("%s got %s (version %d) before that price was committed (version %d was, when it returned): the cache must "+
			"never hold a price before its commit", who, cents(price), got, rec.ceiling)
		return
	}
	// The last write of the book that returned before the visitor came.
	floor, by := first.Version, -1
	for j, o := range w.sc.Visitors {
		wr := w.visits[j]
		if !o.writer() || o.Book != v.Book || !wr.back || wr.returned >= rec.arrived {
			continue
		}
		if ver, ok := w.version(o.Book, o.Price, first); ok && ver > floor {
			floor, by = ver, j
		}
	}
	if got < floor {
		w.Fail("%s got %s (version %d), an old price: visitor %d's write of %s (version %d) had returned at %v, before it came. "+
			"A write must leave nothing older than its own price in Redis, whatever the reads in flight are doing: delete after the "+
			"commit, and refuse a fill whose lease the delete ended",
			who, cents(price), got, by+1, cents(w.sc.Visitors[by].Price), floor, w.visits[by].returned)
	}
}

// judgeRows holds the reads of the row to rule 3.
func (w *xworld) judgeRows() {
	for _, a := range w.rows {
		for _, b := range w.rows {
			if a == b || a.book != b.book || b.start < a.start || (b.start == a.start && b.k < a.k) {
				continue
			}
			aEnd := a.end
			if aEnd < 0 {
				aEnd = 1 << 62
			}
			if b.start >= aEnd || b.start-a.start >= leaseFloor || w.excused(a, b) {
				continue
			}
			w.Fail("%s was read twice at once: read %d%s began at %v, and read %d%s at %v while the first still ran (no write of it "+
				"had returned in between). While one visitor holds the lease, nobody else reads the row: the others wait for its fill",
				a.book, a.k+1, w.by(a.who), a.start, b.k+1, w.by(b.who), b.start)
			return
		}
	}
}

// excused reports whether a write of the book ended a's lease before b
// began: it committed by b's start, and returned no earlier than the call
// that made read a began.
func (w *xworld) excused(a, b *xrow) bool {
	var since time.Duration
	if a.who >= 0 && a.who < len(w.visits) {
		since = w.visits[a.who].arrived
	}
	for _, c := range w.commits {
		if c.book != a.book || c.at > b.start {
			continue
		}
		for j, v := range w.sc.Visitors {
			if v.writer() && v.Book == a.book && v.Price == c.price && (!w.visits[j].back || w.visits[j].returned >= since) {
				return true
			}
		}
	}
	return false
}

// probe plays rule 6: for each book of the scene, a visitor on a new
// instance must get the committed price, and the next one must be served
// without a read of the row.
func (w *xworld) probe(first map[string]catalog.Row) {
	s := w.s
	for _, b := range w.sc.Books {
		truth, _ := s.db.Peek(b)
		o, err := w.fresh(b)
		if w.Unrested(err) {
			return
		}
		if err != nil {
			w.Fail("a visitor of %s after the scene: %v", b, err)
			return
		}
		if o.Err != nil && o.Panic == "" {
			// An abandoned lease may hold the book a while: let the
			// longest a lease may live pass, and ask again.
			if err := s.Elapse(maxLease + 500*xms); w.Unrested(err) {
				return
			} else if err != nil {
				w.Fail("after the scene: %v", err)
				return
			}
			if o, err = w.fresh(b); w.Unrested(err) {
				return
			} else if err != nil {
				w.Fail("a visitor of %s after the scene: %v", b, err)
				return
			}
		}
		switch {
		case o.Panic != "":
			w.Fail("a visitor of %s after the scene: the call panicked: %s", b, o.Panic)
			return
		case o.Err != nil:
			w.Fail("after the scene, with nothing else going on, a visitor of %s got the error %q", b, o.Err)
			return
		case o.Value != truth.Price:
			ver, _ := w.version(b, o.Value, first[b])
			w.Fail("after the scene, with nothing else going on, a visitor of %s got %s (version %d), not the committed %s (version %d): "+
				"an old price survived the writes, and would for its whole time to live. Redis held: %s",
				b, cents(o.Value), ver, cents(truth.Price), truth.Version, s.Cached())
			return
		}
		before := s.db.RowReads(b)
		o, err = w.fresh(b)
		if w.Unrested(err) {
			return
		}
		if err != nil {
			w.Fail("a second visitor of %s after the scene: %v", b, err)
			return
		}
		if o.Err != nil || o.Panic != "" || o.Value != truth.Price || s.db.RowReads(b) != before {
			w.Fail("after the scene, a visitor of %s got its price; a visitor on another instance right after it, with nothing "+
				"else going on, got %s and %s: the price a visitor has just read must be stored in Redis for the next one. Redis held: %s",
				b, describe(o), fleet.Count(s.db.RowReads(b)-before, "read of the row"), s.Cached())
			return
		}
		// And every instance of the scene, now that each write has
		// returned, gets the committed price too.
		for i := range w.sc.Shops {
			shop := s.shops[i]
			c := s.visit(1, func(ctx context.Context) (int, error) { return shop.Price(ctx, b) })
			if err := s.Drive(c.Done, patience); w.Unrested(err) {
				return
			} else if err != nil {
				w.Fail("a visitor of %s on shop-%d after the scene: %v", b, i+1, err)
				return
			}
			if o := c.Outcomes()[0]; o.Err != nil || o.Panic != "" || o.Value != truth.Price {
				w.Fail("after the scene, with every write returned and nothing else going on, a visitor of %s on shop-%d got %s, "+
					"not the committed %s: an instance served an old price after another instance's write had returned",
					b, i+1, describe(o), cents(truth.Price))
				return
			}
		}
	}
}

// fresh sends one visitor of book to a new instance.
func (w *xworld) fresh(book string) (harness.Outcome[int], error) {
	s := w.s
	shop := s.shops[s.add()]
	c := s.visit(1, func(ctx context.Context) (int, error) { return shop.Price(ctx, book) })
	if err := s.Drive(c.Done, patience); err != nil {
		if errors.Is(err, fleet.ErrNoBound) {
			return harness.Outcome[int]{}, fmt.Errorf("still waiting after %v of the shops' clock: %s", patience, c.Where())
		}
		return harness.Outcome[int]{}, err
	}
	return c.Outcomes()[0], nil
}

// explorer returns case 10's explorer for an implementation. A scene that
// breaks an invariant is shrunk: fewer visitors and books, no warm-up,
// contexts that never end, reads that work, cost 10 ms and do not stall,
// earlier arrivals.
func explorer(newShop NewShop) *explore.Explorer[xscene] {
	return &explore.Explorer[xscene]{
		Case: 10, Scenes: exploreScenes10, Points: true, Fixed: fixedScenes10(),
		Draw:    drawScene10,
		Play:    func(h *harness.H, sc xscene, story bool) explore.Played { return playScene10(h, newShop, sc, story) },
		Smaller: candidates10,
		Size:    func(sc xscene) int { return len(sc.Visitors) },
		Noun:    "visitors",
	}
}

// Explore plays exploreScenes10 scenes from the check's seed (or one of
// its own) and fails on the first that breaks an invariant, shrunk.
func Explore(h *harness.H, newShop NewShop) check.Verdict { return explorer(newShop).Check(h) }

// fixedScenes10 are the small scenes the switches check plays under every
// schedule with one switch between two of the shop's statements, and in
// lockstep: two visitors of one instance miss one book at one instant,
// so that whatever each draws or takes in two steps (a token counted up
// and then read back, a flag looked at and then set) can be drawn or
// taken by both. A write on another instance at 50 ms ends the lease of
// the one whose read is still out, and the other takes the lease next.
// If both drew one token, the first fill, which read the old row, finds
// "its" lease held and stores the old price, and the second fill, finding
// its lease gone, leaves it there.
func fixedScenes10() []xscene {
	book := catalog.Priced()[0]
	row, _ := catalog.New().Peek(book)
	reads := make([]xread, 4)
	for k := range reads {
		reads[k] = xread{Cost: 150 * xms}
	}
	return []xscene{{
		Shops: 2, Books: []string{book}, Reads: map[string][]xread{book: reads},
		Visitors: []xvisitor{
			{Shop: 0, Book: book}, {Shop: 0, Book: book},
			{Shop: 1, Book: book, At: 50 * xms, Price: row.Price + 100},
		},
	}}
}

// switchesInfo describes case 10's check of the fixed scenes.
var switchesInfo = check.Info{
	ID:     "switches",
	Scenes: true,
	Parts:  2, // its plays, split by order: the long pole of a check
	Name: "a small scene keeps every invariant under every schedule with one switch between two of the shop's statements, " +
		"and with the goroutines taking turns one statement each (two visitors of one instance miss one book at once; " +
		"a write on another ends the lease of the one still reading)",
	Catches: "a lease token counted up and read back in two steps (Add, then Load): two visitors at once draw one token, " +
		"and the fill that read the old row is stored under the other's lease (wrong/token-add-load)",
}

// Switches plays the fixed scenes under every schedule with one switch
// (see explore.Explorer.Fixed).
func Switches(h *harness.H, newShop NewShop) check.Verdict { return explorer(newShop).Switches(h) }

func candidates10(sc xscene) []xscene {
	var out []xscene
	edit := func(f func(*xscene)) {
		c := sc.clone()
		f(&c)
		out = append(out, c)
	}
	for j := len(sc.Visitors) - 1; j >= 0 && len(sc.Visitors) > 1; j-- {
		edit(func(c *xscene) { c.Visitors = slices.Delete(c.Visitors, j, j+1) })
	}
	for j := range sc.Warm {
		edit(func(c *xscene) { c.Warm = slices.Delete(c.Warm, j, j+1) })
	}
	for b, rs := range sc.Reads {
		for k, rd := range rs {
			if rd.Fails {
				edit(func(c *xscene) { c.Reads[b][k].Fails = false })
			}
			if rd.Cost > 10*xms {
				edit(func(c *xscene) { c.Reads[b][k].Cost = min(rd.Cost/2, 150*xms) })
			}
		}
	}
	for j, v := range sc.Visitors {
		if v.Leave > 0 {
			edit(func(c *xscene) { c.Visitors[j].Leave, c.Visitors[j].Deadline = 0, false })
		}
		if v.At >= 10*xms {
			edit(func(c *xscene) {
				c.Visitors[j].At -= 10 * xms
				if c.Visitors[j].Leave > 0 {
					c.Visitors[j].Leave -= 10 * xms
				}
			})
		}
		if v.Shop > 0 {
			edit(func(c *xscene) { c.Visitors[j].Shop = 0 })
		}
	}
	return out
}
