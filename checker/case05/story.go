package case05

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"stampede/checker/explore"
	"stampede/checker/harness"
	"stampede/checker/shelves"
	"stampede/checker/timeline"
	"stampede/shop/catalog"
	"stampede/shop/clock"
)

// The story's times.
const (
	outageFor = time.Second                     // how long the database is down in the first scene
	lateAt    = 1500 * time.Millisecond         // when the visitor after the outage arrives
	patience  = 2500 * time.Millisecond         // how long the story waits for the crowd
	lateWait  = time.Second                     // how long it waits for the late visitor
	panicWait = time.Second + catalog.QueryCost // how long it waits for the crowd of the second scene
)

// errOverloaded is the database's error during the first scene's outage.
var errOverloaded = errors.New("too many connections")

// Scenario plays the story in two scenes: the database is down for a
// second when the crowd arrives, and then its driver panics once.
func Scenario(ctx context.Context, w io.Writer, args []string, newShop shelves.New) error {
	fs := flag.NewFlagSet("run 5", flag.ContinueOnError)
	visitors := fs.Int("visitors", shelves.Visitors, "how many visitors arrive at once")
	lanes := fs.Bool("timeline", false, "draw what each visitor did")
	seed := fs.Uint64("seed", 0, "play the explorer's scene of this seed (from a failed explore check) instead of the story")
	if err := harness.ParseFlags(fs, args, w); err != nil {
		return err
	}
	if *seed != 0 {
		return explore.Story(ctx, w, newShop, explore.Case5, *seed, *lanes)
	}

	fmt.Fprintf(w, "At 09:00 the cached bestseller list has expired and %d visitors arrive at once.\n", *visitors)
	fmt.Fprintf(w, "Until 09:00:01 the database is overloaded: each query fails after %.1f s\n", catalog.QueryCost.Seconds())
	fmt.Fprintf(w, "with %q. At 09:00:01.5 one more visitor arrives.\n\n", errOverloaded.Error())
	began := time.Now()
	rec := timeline.New(began, catalog.QueryCost)
	db := catalog.New(catalog.WithHook(func(ctx context.Context, _ string) error {
		rec.Query(ctx, time.Now())
		if time.Since(began) < outageFor {
			if err := (clock.Real{}).Sleep(ctx, catalog.QueryCost); err != nil {
				return err
			}
			return errOverloaded
		}
		return nil
	}))
	shop := newShop(db)
	crowd := arrive(ctx, shop, rec, 0, *visitors)
	crowd.wait(patience)
	crowd.report(w, db, began)
	time.Sleep(time.Until(began.Add(lateAt)))
	before := db.Queries(catalog.Bestsellers)
	late := arrive(ctx, shop, rec, *visitors, 1)
	late.wait(lateWait)
	fmt.Fprintf(w, "  the visitor at 09:00:01.5:  %s\n", late.summary(db.Queries(catalog.Bestsellers)-before))
	if *lanes {
		fmt.Fprintln(w)
		rec.Draw(w, 60, 12)
	}

	fmt.Fprintf(w, "\nAt 10:00 the list expires again and %d visitors arrive. The first query\n", *visitors)
	fmt.Fprintf(w, "trips over a bug in the database driver and panics; the queries after it\n")
	fmt.Fprintf(w, "work. (The shop's server keeps a panic to the visitor it hit, as net/http\n")
	fmt.Fprintf(w, "does: it recovers, logs, and closes that visitor's connection; the other\n")
	fmt.Fprintf(w, "visitors carry on.)\n\n")
	began = time.Now()
	rec = timeline.New(began, catalog.QueryCost)
	var once sync.Once
	db = catalog.New(catalog.WithHook(func(ctx context.Context, _ string) error {
		rec.Query(ctx, time.Now())
		tripped := false
		once.Do(func() { tripped = true })
		if tripped {
			if err := (clock.Real{}).Sleep(ctx, catalog.QueryCost); err != nil {
				return err
			}
			panic("catalog driver: nil connection in pool")
		}
		return nil
	}))
	crowd = arrive(ctx, newShop(db), rec, 0, *visitors)
	crowd.wait(panicWait)
	crowd.report(w, db, began)
	if *lanes {
		fmt.Fprintln(w)
		rec.Draw(w, 60, 12)
	}
	return nil
}

// answer is what one visitor of the story got.
type answer struct {
	books    []string
	err      error
	panicked bool
	at       time.Time
}

// party is a group of visitors of the story.
type party struct {
	mu   sync.Mutex
	got  []*answer // nil while the visitor waits
	done chan struct{}
}

// arrive sends n visitors, numbered from first for the timeline, to the
// shop at once. A panic in a visitor's call is recovered and counted, as a
// web server does for one request.
func arrive(ctx context.Context, shop shelves.Shop, rec *timeline.Recorder, first, n int) *party {
	p := &party{got: make([]*answer, n), done: make(chan struct{})}
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			vctx := rec.Arrive(ctx, first+i, time.Now())
			a := &answer{panicked: true}
			defer func() {
				_ = recover()
				a.at = time.Now()
				rec.Answer(first+i, a.at)
				p.mu.Lock()
				p.got[i] = a
				p.mu.Unlock()
			}()
			a.books, a.err = shop.Top(vctx, catalog.Bestsellers)
			a.panicked = false
		}()
	}
	go func() { wg.Wait(); close(p.done) }()
	return p
}

// wait waits until every visitor has an answer, or for d.
func (p *party) wait(d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.done:
	case <-t.C:
	}
}

// count returns how many visitors got the list, an error, a panic, and
// how many are still waiting, and when the last answer came.
func (p *party) count() (listed, failed, panicked, waiting int, last time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	want := catalog.Books(catalog.Bestsellers)
	for _, a := range p.got {
		switch {
		case a == nil:
			waiting++
			continue
		case a.panicked:
			panicked++
		case a.err != nil:
			failed++
		case slices.Equal(a.books, want):
			listed++
		}
		if a.at.After(last) {
			last = a.at
		}
	}
	return listed, failed, panicked, waiting, last
}

// report writes the crowd's figures.
func (p *party) report(w io.Writer, db *catalog.DB, began time.Time) {
	listed, failed, panicked, waiting, last := p.count()
	fmt.Fprintf(w, "  bestseller queries:         %d\n", db.Queries(catalog.Bestsellers))
	fmt.Fprintf(w, "  visitors given the list:    %d\n", listed)
	fmt.Fprintf(w, "  visitors given an error:    %d\n", failed)
	if panicked > 0 {
		fmt.Fprintf(w, "  visitors given a panic:     %d\n", panicked)
	}
	if !last.IsZero() {
		fmt.Fprintf(w, "  last answer:                after %.2f s\n", last.Sub(began).Seconds())
	}
	if waiting > 0 {
		fmt.Fprintf(w, "  visitors still waiting:     %d when the story stopped watching, after %.1f s\n",
			waiting, time.Since(began).Seconds())
	}
}

// queried says how many queries the late visitor's visit made.
func queried(n int) string {
	switch n {
	case 0:
		return ", without a query"
	case 1:
		return ", from a fresh query"
	}
	return fmt.Sprintf(", after %d queries", n)
}

// summary says in a few words what a party of one got, and how many
// queries it took.
func (p *party) summary(queries int) string {
	listed, failed, panicked, waiting, _ := p.count()
	switch {
	case waiting > 0:
		return fmt.Sprintf("still waiting after %.1f s", lateWait.Seconds())
	case listed > 0:
		return "got the list" + queried(queries)
	case failed > 0:
		p.mu.Lock()
		defer p.mu.Unlock()
		return fmt.Sprintf("got an error%s: %v", queried(queries), p.got[0].err)
	case panicked > 0:
		return "got a panic" + queried(queries)
	}
	return "got a wrong list" + queried(queries)
}
