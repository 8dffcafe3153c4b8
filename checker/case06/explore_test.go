package case06

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"

	"stampede/checker/explore"
	"stampede/checker/explore/exploretest"
	rfencing "stampede/checker/library/case06/right/fencing"
	rluaacquire "stampede/checker/library/case06/right/luaacquire"
	rpubsub "stampede/checker/library/case06/right/pubsub"
	rredsync "stampede/checker/library/case06/right/redsync"
	rretrylock "stampede/checker/library/case06/right/retrylock"
	rsetnxget "stampede/checker/library/case06/right/setnxget"
	rwatchmulti "stampede/checker/library/case06/right/watchmulti"
	shipped "stampede/checker/library/case06/shipped"
	"stampede/checker/shelves"
	"stampede/shop/catalog"
	"stampede/shop/clock"
	solution "stampede/solutions/case06"
)

var fleetScenes, fleetSeed = exploretest.Flags(12)

func mkShop[S shelves.Shop](f func(*catalog.DB, *redis.Client, clock.Clock) S) NewShop {
	return func(db *catalog.DB, rdb *redis.Client, clk clock.Clock) shelves.Shop { return f(db, rdb, clk) }
}

// TestExploreRightFleets plays -scenes fleet scenes (run it with -scenes
// 1000 for the proof) on the solution and every known-right entry: none
// may fail. (Not in parallel: settling waits for the whole process.)
func TestExploreRightFleets(t *testing.T) {
	answer := func(pkg string, mk NewShop) exploretest.Answer {
		return exploretest.Answer{Pkg: pkg, Run: explorer(mk).Run}
	}
	answers := []exploretest.Answer{
		answer("solutions/case06", mkShop(solution.New)),
		answer("checker/library/case06/right/fencing", mkShop(rfencing.New)),
		answer("checker/library/case06/right/luaacquire", mkShop(rluaacquire.New)),
		answer("checker/library/case06/right/pubsub", mkShop(rpubsub.New)),
		answer("checker/library/case06/right/redsync", mkShop(rredsync.New)),
		answer("checker/library/case06/right/retrylock", mkShop(rretrylock.New)),
		answer("checker/library/case06/right/setnxget", mkShop(rsetnxget.New)),
		answer("checker/library/case06/right/watchmulti", mkShop(rwatchmulti.New)),
	}
	exploretest.Every(t, "../library", []int{6}, answers...)
	exploretest.Prove(t, *fleetSeed, *fleetScenes, answers...)
}

func TestExploreFailsTheShippedFleet(t *testing.T) {
	exploretest.Fails(t, "checker/library/case06/shipped", explorer(mkShop(shipped.New)).Run, 20)
}

// TestSourceReadsRaceOnlyInTheShop calls the explorer's source from many
// goroutines at once, past the reads a shelf is allowed, as a shop that
// reads the source on every instance does. The race detector must find
// nothing in the checker's own bookkeeping: a race there would be
// charged to the shop's call of the source and fail a race check the shop
// should pass (CI saw it once, on case 6's wrong/losersquery).
func TestSourceReadsRaceOnlyInTheShop(t *testing.T) {
	const readers = 8
	zero := make([]time.Duration, readers)
	w := &fworld{
		f:      start(nil, nil, holdNone(), nil),
		sc:     fscene{Costs: map[string][]time.Duration{catalog.Bestsellers: zero}},
		locks:  map[string][]string{},
		staged: map[string]int{},
	}
	w.Record = explore.NewRecord(w.f.Clock.Elapsed, explore.Width(8), false)
	var wg sync.WaitGroup
	for range readers {
		wg.Go(func() { assert.NoError(t, w.hook(context.Background(), 0, catalog.Bestsellers)) })
	}
	wg.Wait()
	assert.Len(t, w.reads, readers)
	assert.Contains(t, w.Played().Bad, "read from the source")
}
