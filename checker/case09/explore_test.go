package case09

import (
	"context"
	"flag"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"

	"stampede/checker/harness"
	rearly "stampede/checker/library/case09/right/early"
	rlocalflight "stampede/checker/library/case09/right/localflight"
	rrefresher "stampede/checker/library/case09/right/refresher"
	shipped "stampede/checker/library/case09/shipped"
	"stampede/shop/catalog"
	"stampede/shop/clock"
	solution "stampede/solutions/case09"
)

var (
	exploreN    = flag.Int("scenes", 8, "how many explorer scenes each right answer of case 9 must pass in a row")
	exploreSeed = flag.Uint64("seed", 1, "the seed of the first scene")
)

func mk[S Shop](f func(*catalog.DB, *redis.Client, clock.Clock) S) NewShop {
	return func(db *catalog.DB, rdb *redis.Client, clk clock.Clock) Shop { return f(db, rdb, clk) }
}

// TestExploreRight plays -scenes scenes (run it with -scenes 1000 for the
// proof) on the solution and every known-right entry: none may fail. (Not
// in parallel: settling waits for the whole process.)
func TestExploreRight(t *testing.T) {
	if testing.Short() {
		t.Skip("builds hundreds of fleets")
	}
	for _, r := range []struct {
		name string
		mk   NewShop
	}{
		{"solutions/case09", mk(solution.New)},
		{"checker/library/case09/right/early", mk(rearly.New)},
		{"checker/library/case09/right/localflight", mk(rlocalflight.New)},
		{"checker/library/case09/right/refresher", mk(rrefresher.New)},
	} {
		t.Run(r.name, func(t *testing.T) {
			h := harness.New(context.Background(), "stampede/"+r.name, harness.DefaultBound)
			began := time.Now()
			v := exploreScenesFrom(h, r.mk, *exploreSeed, *exploreN)
			assert.True(t, v.Pass, "%s: %s", v.Figure, v.Message)
			t.Logf("%s in %v", v.Figure, time.Since(began).Round(time.Millisecond))
		})
	}
}

func TestExploreFailsTheShipped(t *testing.T) {
	if testing.Short() {
		t.Skip("builds fleets")
	}
	h := harness.New(context.Background(), "stampede/checker/library/case09/shipped", harness.DefaultBound)
	v := exploreScenesFrom(h, mk(shipped.New), 1, 8)
	assert.False(t, v.Pass)
	assert.Contains(t, v.Message, "--seed")
	t.Logf("%s: %s", v.Figure, v.Message)
}
