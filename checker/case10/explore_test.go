package case10

import (
	"testing"

	"github.com/redis/go-redis/v9"

	"stampede/checker/explore/exploretest"
	revalshareload "stampede/checker/library/case10/right/evalsha-reload"
	rfencing "stampede/checker/library/case10/right/fencing"
	rluaops "stampede/checker/library/case10/right/luaops"
	rtwodelsleasefirst "stampede/checker/library/case10/right/twodels-leasefirst"
	rversioncas "stampede/checker/library/case10/right/versioncas"
	rwriterlease "stampede/checker/library/case10/right/writerlease"
	shipped "stampede/checker/library/case10/shipped"
	"stampede/shop/catalog"
	"stampede/shop/clock"
	solution "stampede/solutions/case10"
)

var exploreScenes, exploreSeed = exploretest.Flags(8)

func mkShop[S Shop](f func(*catalog.DB, *redis.Client, clock.Clock) S) NewShop {
	return func(db *catalog.DB, rdb *redis.Client, clk clock.Clock) Shop { return f(db, rdb, clk) }
}

// TestExploreRightAnswers plays -scenes scenes (run it with -scenes 1000
// for the proof) on the solution and every known-right entry: none may
// fail. (Not in parallel: settling waits for the whole process.)
func TestExploreRightAnswers(t *testing.T) {
	answer := func(pkg string, mk NewShop) exploretest.Answer {
		return exploretest.Answer{Pkg: pkg, Run: explorer(mk).Run}
	}
	answers := []exploretest.Answer{
		answer("solutions/case10", mkShop(solution.New)),
		answer("checker/library/case10/right/fencing", mkShop(rfencing.New)),
		answer("checker/library/case10/right/luaops", mkShop(rluaops.New)),
		answer("checker/library/case10/right/versioncas", mkShop(rversioncas.New)),
		answer("checker/library/case10/right/twodels-leasefirst", mkShop(rtwodelsleasefirst.New)),
		answer("checker/library/case10/right/evalsha-reload", mkShop(revalshareload.New)),
		answer("checker/library/case10/right/writerlease", mkShop(rwriterlease.New)),
	}
	exploretest.Every(t, "../library", []int{10}, answers...)
	exploretest.Prove(t, *exploreSeed, *exploreScenes, answers...)
}

func TestExploreFailsTheShippedCode(t *testing.T) {
	exploretest.Fails(t, "checker/library/case10/shipped", explorer(mkShop(shipped.New)).Run, 20)
}
