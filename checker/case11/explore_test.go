package case11

import (
	"testing"

	"github.com/redis/go-redis/v9"

	"stampede/checker/explore/exploretest"
	rgeneration "stampede/checker/library/case11/right/generation"
	shipped "stampede/checker/library/case11/shipped"
	"stampede/shop/catalog"
	"stampede/shop/clock"
	solution "stampede/solutions/case11"
)

var exploreScenes, exploreSeed = exploretest.Flags(8)

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
	exploretest.Fails(t, "checker/library/case11/shipped", explorer(mkShop(shipped.New)).Run, 20)
}
