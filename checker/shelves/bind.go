package shelves

import (
	"context"
	"io"
	"sync"
	"time"

	"stampede/checker/harness"
	"stampede/checker/timeline"
	"stampede/shop/catalog"
)

// A Story is a case's `shop run N` for a shop made by newShop.
type Story func(ctx context.Context, w io.Writer, args []string, newShop New) error

// Bind binds one of cases 1 to 5, its checks and its story, to an
// implementation's constructor; each case's own Bind, which the grader's
// generated code calls with the student's New, is this with its checks.
func Bind[S Shop](newShop func(*catalog.DB) S, checks []harness.Check[New], story Story) harness.Bound {
	mk := func(db *catalog.DB) Shop { return newShop(db) }
	return harness.Bound{
		Scenario: func(ctx context.Context, w io.Writer, args []string) error { return story(ctx, w, args, mk) },
		Checks:   harness.Decide(checks, mk),
	}
}

// Burst sends n visitors of shelf to shop at once, in real time, each
// drawn in rec, and returns how many of them got an error once all have
// returned.
func Burst(ctx context.Context, shop Shop, rec *timeline.Recorder, shelf string, n int) (failed int) {
	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			<-start
			vctx := rec.Arrive(ctx, i, time.Now())
			_, errs[i] = shop.Top(vctx, shelf)
			rec.Answer(i, time.Now())
		})
	}
	close(start)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			failed++
		}
	}
	return failed
}
