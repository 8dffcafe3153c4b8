package case07

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"stampede/checker/explore/exploretest"
	rclosedform "stampede/checker/library/case07/right/closedform"
	rexpform "stampede/checker/library/case07/right/expform"
	rinline "stampede/checker/library/case07/right/inline"
	rredraw "stampede/checker/library/case07/right/redraw"
	rrefresher "stampede/checker/library/case07/right/refresher"
	rxsync "stampede/checker/library/case07/right/xsync"
	"stampede/shop/catalog"
	"stampede/shop/clock"
)

// The explorer's statistical invariants are only as good as its bounds:
// every scene it can draw must have a chance of a missed window below
// missTail, and a lead G shorter than the time to live (or the early rule
// could catch nothing).
func TestEveryDrawnSceneHasItsBounds(t *testing.T) {
	for seed := uint64(1); seed < 2000; seed++ {
		sc := drawScene(seed)
		require.LessOrEqual(t, sc.missChance(), missTail, "%d: %s", seed, sc)
		require.Less(t, sc.earlyLead(), sc.TTL*3/4, "%d: %s", seed, sc)
		require.Greater(t, sc.earlyLead(), denseLeads*sc.Cost, "%d: %s", seed, sc)
	}
	assert.Equal(t, drawScene(9), drawScene(9))
}

func TestExploreScenesOfTheSolution(t *testing.T) {
	if testing.Short() {
		t.Skip("plays minutes of virtual traffic")
	}
	began := time.Now()
	v := explorer(solutionShop).Run(newH(), 1, 20)
	assert.True(t, v.Pass, "%s: %s", v.Figure, v.Message)
	t.Logf("%s in %v", v.Figure, time.Since(began))
	v = explorer(shippedShop).Run(newH(), 1, 5)
	assert.False(t, v.Pass)
	t.Logf("shipped: %s: %s", v.Figure, v.Message)
}

var rightScenes, rightSeed = exploretest.Flags(8)

// TestExploreRightAnswers plays -scenes scenes (run it with -scenes 1000
// for the proof) on the solution and every known-right entry: none may
// fail. (Not in parallel: the world waits for the whole process to rest.)
func TestExploreRightAnswers(t *testing.T) {
	answer := func(pkg string, mk New) exploretest.Answer {
		return exploretest.Answer{Pkg: pkg, Run: explorer(mk).Run}
	}
	right := func(name string, newShop func(*catalog.DB, clock.Clock, func() float64, time.Duration, float64) Shop) exploretest.Answer {
		return answer("checker/library/case07/right/"+name, newShop)
	}
	answers := []exploretest.Answer{
		answer("solutions/case07", solutionShop),
		right("closedform", func(db *catalog.DB, c clock.Clock, r func() float64, ttl time.Duration, b float64) Shop {
			return rclosedform.New(db, c, r, ttl, b)
		}),
		right("expform", func(db *catalog.DB, c clock.Clock, r func() float64, ttl time.Duration, b float64) Shop {
			return rexpform.New(db, c, r, ttl, b)
		}),
		right("inline", func(db *catalog.DB, c clock.Clock, r func() float64, ttl time.Duration, b float64) Shop {
			return rinline.New(db, c, r, ttl, b)
		}),
		right("redraw", func(db *catalog.DB, c clock.Clock, r func() float64, ttl time.Duration, b float64) Shop {
			return rredraw.New(db, c, r, ttl, b)
		}),
		right("refresher", func(db *catalog.DB, c clock.Clock, r func() float64, ttl time.Duration, b float64) Shop {
			return rrefresher.New(db, c, r, ttl, b)
		}),
		right("xsync", func(db *catalog.DB, c clock.Clock, r func() float64, ttl time.Duration, b float64) Shop {
			return rxsync.New(db, c, r, ttl, b)
		}),
	}
	exploretest.Every(t, "../library", []int{7}, answers...)
	exploretest.Prove(t, *rightSeed, *rightScenes, answers...)
}
