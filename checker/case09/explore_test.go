package case09

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"stampede/checker/explore/exploretest"
	"stampede/checker/harness"
	rearly "stampede/checker/library/case09/right/early"
	rlocalflight "stampede/checker/library/case09/right/localflight"
	rrefresher "stampede/checker/library/case09/right/refresher"
	rrefresheradd "stampede/checker/library/case09/right/refresheradd"
	rversioned "stampede/checker/library/case09/right/versioned"
	shipped "stampede/checker/library/case09/shipped"
	"stampede/shop/catalog"
	"stampede/shop/clock"
	solution "stampede/solutions/case09"
)

var exploreN, exploreSeed = exploretest.Flags(8)

func mk[S Shop](f func(*catalog.DB, *redis.Client, clock.Clock) S) NewShop {
	return func(db *catalog.DB, rdb *redis.Client, clk clock.Clock) Shop { return f(db, rdb, clk) }
}

// TestExploreRight plays -scenes scenes (run it with -scenes 1000 for the
// proof) on the solution and every known-right entry: none may fail. (Not
// in parallel: settling waits for the whole process.)
//
// right/refresher keeps a goroutine per shelf asleep on the scene's clock
// until the shelf's logical expiry, a design and not a leak; but nobody
// moves a clock again once its scene ends, so one process keeps every
// scene's, and each look at the process takes longer than the last (1,000
// scenes ran 9 minutes before they were stopped, against 6 s for 40).
// Prove it in runs of 100 scenes, each a process of its own, as the
// grader plays each run of the check: -run
// 'TestExploreRight/checker/library/case09/right/refresher$' -scenes 100
// -seed 1, 101, ..., 9901.
func TestExploreRight(t *testing.T) {
	answer := func(pkg string, mk NewShop) exploretest.Answer {
		return exploretest.Answer{Pkg: pkg, Run: explorer(mk).Run}
	}
	answers := []exploretest.Answer{
		answer("solutions/case09", mk(solution.New)),
		answer("checker/library/case09/right/early", mk(rearly.New)),
		answer("checker/library/case09/right/localflight", mk(rlocalflight.New)),
		answer("checker/library/case09/right/refresher", mk(rrefresher.New)),
		answer("checker/library/case09/right/versioned", mk(rversioned.New)),
		answer("checker/library/case09/right/refresheradd", mk(rrefresheradd.New)),
	}
	exploretest.Every(t, "../library", []int{9}, answers...)
	exploretest.Prove(t, *exploreSeed, *exploreN, answers...)
}

// TestNoReadOutlivesItsScene: a scene ends once its visitors have
// returned, and a rebuild may still be reading then. Its read sleeps in the
// checker's hook on the shops' clock, which nobody moves again; the fleet
// lets it go when the scene closes. It slept for ever before, and a proof
// of 10,000 scenes piled up hundreds of them (854 after 1h40m), each in
// every snapshot, until the harness would have called them a flood. From
// seed 1, 20 scenes of the solution leave four such reads.
func TestNoReadOutlivesItsScene(t *testing.T) {
	if testing.Short() {
		t.Skip("builds fleets")
	}
	h := harness.New(context.Background(), "stampede/solutions/case09", harness.DefaultBound)
	v := explorer(mk(solution.New)).Run(h, 1, 20)
	require.True(t, v.Pass, "%s: %s", v.Figure, v.Message)
	// A read let go returns at once; give it time to, generously.
	var asleep int
	for range 200 {
		buf := make([]byte, 1<<22)
		asleep = strings.Count(string(buf[:runtime.Stack(buf, true)]), "(*eworld).hook")
		if asleep == 0 {
			break
		}
		time.Sleep(25 * time.Millisecond)
	}
	assert.Zero(t, asleep, "reads still asleep in the checker's hook after their scenes ended")
}

func TestExploreFailsTheShipped(t *testing.T) {
	exploretest.Fails(t, "checker/library/case09/shipped", explorer(mk(shipped.New)).Run, 8)
}
