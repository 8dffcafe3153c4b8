package case11

import (
	"context"
	"flag"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"

	"stampede/checker/explore/exploretest"
	"stampede/checker/harness"
	rgeneration "stampede/checker/library/case11/right/generation"
	shipped "stampede/checker/library/case11/shipped"
	"stampede/shop/catalog"
	"stampede/shop/clock"
	solution "stampede/solutions/case11"
)

var (
	exploreScenes = flag.Int("scenes", 8, "how many explorer scenes each right answer of case 11 must pass in a row (make proof plays 1,000)")
	exploreSeed   = flag.Uint64("seed", 1, "the seed of the first scene")
)

func mkShop[S Shop](f func(*catalog.DB, *redis.Client, clock.Clock, string) S) NewShop {
	return func(db *catalog.DB, rdb *redis.Client, clk clock.Clock, channel string) Shop {
		return f(db, rdb, clk, channel)
	}
}

// TestExploreRightAnswers plays -scenes scenes (run it with -scenes 1000
// for the proof) on the solution and every known-right entry: none may
// fail. (Not in parallel: settling waits for the whole process.)
func TestExploreRightAnswers(t *testing.T) {
	answer := func(pkg string, mk NewShop) exploretest.Answer {
		return exploretest.Answer{Pkg: pkg, Run: explorer(mk).Run}
	}
	answers := []exploretest.Answer{
		answer("solutions/case11", mkShop(solution.New)),
		answer("checker/library/case11/right/generation", mkShop(rgeneration.New)),
	}
	exploretest.Every(t, "../library", []int{11}, answers...)
	exploretest.Prove(t, *exploreSeed, *exploreScenes, answers...)
}

// TestExploreFailsTheShippedCode: copies with a time to live and nothing
// else keep the old price after a write, in the first scenes.
func TestExploreFailsTheShippedCode(t *testing.T) {
	if testing.Short() {
		t.Skip("builds fleets")
	}
	h := harness.New(context.Background(), "stampede/checker/library/case11/shipped", harness.DefaultBound)
	v := explorer(mkShop(shipped.New)).Run(h, 1, 20)
	assert.False(t, v.Pass, v.Message)
}
