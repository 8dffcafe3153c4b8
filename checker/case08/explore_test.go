package case08

import (
	"testing"

	"github.com/redis/go-redis/v9"

	"stampede/checker/explore/exploretest"
	rerrgroup "stampede/checker/library/case08/right/errgroup"
	rloadorstore "stampede/checker/library/case08/right/loadorstore"
	rweighted "stampede/checker/library/case08/right/weighted"
	rworkers "stampede/checker/library/case08/right/workers"
	shipped "stampede/checker/library/case08/shipped"
	"stampede/shop/clock"
	"stampede/shop/events"
	solution "stampede/solutions/case08"
)

var exploreN, exploreSeed = exploretest.Flags(12)

func mkShop[S Shop](f func(*events.DB, *redis.Client, clock.Clock) S) NewShop {
	return func(db *events.DB, rdb *redis.Client, clk clock.Clock) Shop { return f(db, rdb, clk) }
}

// TestExploreRight plays -scenes scenes (run it with -race -scenes 1000
// for the proof) on the solution and every known-right entry: none may
// fail. (Not in parallel: settling waits for the whole process.)
//
// right/workers starts 20 helpers per shop that stay parked for the shop's
// life, a design and not a leak, but one process keeps every scene's: past
// about 150 scenes their stacks make each look at the process slow, and
// the harness counts a flood of goroutines near 4,000. Prove it in runs of
// 100 scenes (-run 'TestExploreRight/checker/library/case08/right/workers'
// -scenes 100 -seed 1, 101, ..., 901), each a process of its own, as the
// grader plays each run of the check.
func TestExploreRight(t *testing.T) {
	answer := func(pkg string, mk NewShop) exploretest.Answer {
		return exploretest.Answer{Pkg: pkg, Run: explorer(mk).Run}
	}
	answers := []exploretest.Answer{
		answer("solutions/case08", mkShop(solution.New)),
		answer("checker/library/case08/right/errgroup", mkShop(rerrgroup.New)),
		answer("checker/library/case08/right/weighted", mkShop(rweighted.New)),
		answer("checker/library/case08/right/workers", mkShop(rworkers.New)),
		answer("checker/library/case08/right/loadorstore", mkShop(rloadorstore.New)),
	}
	exploretest.Every(t, "../library", []int{8}, answers...)
	exploretest.Prove(t, *exploreSeed, *exploreN, answers...)
}

// TestExploreFailsShipped holds the explorer to catching the shipped code,
// with a seed to replay and a shrunk scene.
func TestExploreFailsShipped(t *testing.T) {
	exploretest.Fails(t, "checker/library/case08/shipped", explorer(mkShop(shipped.New)).Run, 8)
}
