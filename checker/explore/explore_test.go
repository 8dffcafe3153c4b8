package explore

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"stampede/checker/check"
	"stampede/checker/harness"
	"stampede/checker/shelves"
	"stampede/shop/catalog"
)

func TestDrawIsTheSameForTheSameSeed(t *testing.T) {
	for seed := uint64(1); seed < 50; seed++ {
		assert.Equal(t, Draw(seed, Case5), Draw(seed, Case5))
	}
	a, b := Draw(1, Case5), Draw(2, Case5)
	assert.NotEqual(t, a.String(), b.String())
}

func TestScenesOfTheSunnyCasesHaveNoFailuresAndNoLeaving(t *testing.T) {
	for seed := uint64(1); seed < 500; seed++ {
		sc := Draw(seed, Case1)
		for _, v := range sc.Visitors {
			assert.Zero(t, v.Leave)
		}
		for _, ps := range sc.Plans {
			for _, p := range ps {
				assert.Equal(t, Works, p.Fault)
			}
		}
	}
}

func TestAVisitorsContextEndsAsItWasToldAndPassesItOn(t *testing.T) {
	far := time.Now().Add(time.Hour)
	c := newVisitCtx(3, true, far)
	child, cancel := context.WithCancel(context.WithoutCancel(c))
	defer cancel()
	derived, stop := context.WithCancel(c)
	defer stop()
	assert.Equal(t, 3, visitorOf(child), "values survive WithoutCancel")
	dl, ok := c.Deadline()
	assert.True(t, ok)
	assert.Equal(t, far, dl)
	assert.NoError(t, c.Err())

	c.end()
	<-derived.Done()
	assert.ErrorIs(t, c.Err(), context.DeadlineExceeded)
	assert.ErrorIs(t, derived.Err(), context.DeadlineExceeded, "a derived context ends with the visitor's own reason")
	assert.NoError(t, child.Err(), "WithoutCancel cuts the cancellation")

	plain := newVisitCtx(0, false, far)
	plain.end()
	assert.ErrorIs(t, plain.Err(), context.Canceled)
}

// refetch is a shop with single-flight and no cache: every burst queries
// once, and the next visitor queries again.
type refetch struct {
	db *catalog.DB
}

func (r refetch) Top(ctx context.Context, shelf string) ([]string, error) {
	return r.db.Top(ctx, shelf)
}

// keep is a shop that serves the first list it ever got, whatever the
// shelf: visitors of a second shelf get the wrong list.
type keep struct {
	db    *catalog.DB
	first chan []string
}

func (k *keep) Top(ctx context.Context, shelf string) ([]string, error) {
	select {
	case b := <-k.first:
		k.first <- b
		return b, nil
	default:
	}
	b, err := k.db.Top(ctx, shelf)
	if err != nil {
		return nil, errors.New("no")
	}
	k.first <- b
	return b, nil
}

func TestAFailingSceneIsShrunkAndNamesItsSeed(t *testing.T) {
	h := harness.New(context.Background(), check.Module+"/checker/explore", time.Second)
	v := For(func(db *catalog.DB) shelves.Shop { return refetch{db} }, Case1).Run(h, 77, 50)
	require.False(t, v.Pass)
	assert.Contains(t, v.Figure, "seed 7")
	assert.Contains(t, v.Message, "--seed")
	// The smallest scene that queries twice: one visitor after another,
	// or two at once.
	assert.Regexp(t, `shrunk from \d+ visitors to [12]: [12] visitors? `, v.Message)

	v = For(func(db *catalog.DB) shelves.Shop { return &keep{db: db, first: make(chan []string, 1)} }, Case3).Run(h, 1, 50)
	require.False(t, v.Pass)
	assert.True(t, strings.Contains(v.Message, "not the database's list") || strings.Contains(v.Message, "queries"), v.Message)
}

// An explorer's FAIL fits in a few lines: a scene too long to show is left
// to the command that shows it whole.
func TestAFailureFitsInAFewLines(t *testing.T) {
	long := strings.Repeat("reader 1: event 1 at 0s; ", 40)
	f := Failure{Bad: "event 1 was queried twice.", Scene: long, Kept: 21, From: 48, Noun: "readers", Shrunk: true,
		Replay: "go run ./shop check 8 --seed 17", Watch: "go run ./shop run 8 --seed 17 --timeline"}
	got := f.String()
	assert.Less(t, len(got), 400, got)
	assert.Contains(t, got, "shrunk from 48 readers to 21, is too long to show here")
	assert.Contains(t, got, "`go run ./shop run 8 --seed 17 --timeline`")
	f.Scene = "reader 1: event 1 at 0s"
	assert.Equal(t, "event 1 was queried twice.\nThe scene, shrunk from 48 readers to 21: reader 1: event 1 at 0s.\n"+
		"Replay it: `go run ./shop check 8 --seed 17`; see it whole, event by event: `go run ./shop run 8 --seed 17 --timeline` "+
		"(a replay that passes: try a few times, the bug needs an interleaving)", f.String(), "three lines")
	assert.Contains(t, f.String(), "try a few times", "a bug of one interleaving may not come back at once")
	f.Shrunk, f.Kept = false, 48
	assert.Contains(t, f.String(), "The scene, of 48 readers (no smaller one broke a rule): reader 1", "a scene not shrunk is not said to be")
	f.Shrunk = true
	assert.Contains(t, f.String(), "The scene, made simpler (each of its 48 readers needed): reader 1",
		"a scene shrunk in something else than its readers is not said to go from 48 to 48")
	f.Scheduled = true
	assert.Contains(t, f.String(), "the same schedule of your statements again", "under points a seed replays its interleaving")
	assert.NotContains(t, f.String(), "try a few times")
}
