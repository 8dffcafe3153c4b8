package case07

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestBoundsFailACorrectRuleRarely holds the bounds of Delta and Beta to
// the chance the doc comments state: each side of a probe below tail, a
// check (two probes) below 1e-6, and the ranges quoted in the chapter.
func TestBoundsFailACorrectRuleRarely(t *testing.T) {
	binom := func(n, k int, p float64) float64 {
		lg := func(x int) float64 { v, _ := math.Lgamma(float64(x) + 1); return v }
		return math.Exp(lg(n) - lg(k) - lg(n-k) + float64(k)*math.Log(p) + float64(n-k)*math.Log1p(-p))
	}
	for _, p := range []float64{math.Exp(-2), math.Exp(-0.5)} {
		lo, hi := bounds(probes, p)
		below, above := 0.0, 0.0
		for k := 0; k < lo; k++ {
			below += binom(probes, k, p)
		}
		for k := hi + 1; k <= probes; k++ {
			above += binom(probes, k, p)
		}
		assert.LessOrEqual(t, below, tail)
		assert.LessOrEqual(t, above, tail)
		assert.Greater(t, below+binom(probes, lo, p), tail, "lo is not the largest such bound")
		assert.Greater(t, above+binom(probes, hi, p), tail, "hi is not the smallest such bound")
		t.Logf("p=%.4f: %d to %d, outside with chance %.2g", p, lo, hi, below+above)
	}
	assert.Less(t, 4*tail, 1e-6)
	lo, hi := bounds(probes, math.Exp(-2))
	assert.Equal(t, [2]int{6, 54}, [2]int{lo, hi})
	lo, hi = bounds(probes, math.Exp(-0.5))
	assert.Equal(t, [2]int{86, 155}, [2]int{lo, hi})
}

// TestShelfFloor holds the probe of two shelves to its doc comment: a
// right rule falls below the floor with a chance below shelfTail, for
// either dating of expiry, Delta as a whole fails a right rule with a
// chance below 1e-6, and a rule with the fast shelf's delta reaches the
// floor with a chance below 1e-26.
func TestShelfFloor(t *testing.T) {
	binom := func(n, k int, p float64) float64 {
		lg := func(x int) float64 { v, _ := math.Lgamma(float64(x) + 1); return v }
		return math.Exp(lg(n) - lg(k) - lg(n-k) + float64(k)*math.Log(p) + float64(n-k)*math.Log1p(-p))
	}
	below := func(k int, p float64) float64 {
		s := 0.0
		for i := range k {
			s += binom(shelfProbes, i, p)
		}
		return s
	}
	floor := shelfFloor()
	right := chanceAt(shelfConfig, shelfLeft)
	fromStart := math.Exp(-(shelfLeft - slowCost).Seconds() / (slowCost.Seconds() * shelfConfig.beta))
	assert.LessOrEqual(t, below(floor, right), shelfTail)
	assert.Greater(t, below(floor+1, right), shelfTail, "the floor is not the largest such bound")
	assert.LessOrEqual(t, below(floor, fromStart), shelfTail)
	assert.Less(t, 4*tail+shelfTail, 1e-6)
	wrong := 0.0 // the fast shelf's delta, the larger chance of the two datings
	for _, g := range []time.Duration{shelfLeft, shelfLeft - slowCost} {
		p := math.Exp(-g.Seconds() / (fastCost.Seconds() * shelfConfig.beta))
		above := 0.0
		for k := floor; k <= shelfProbes; k++ {
			above += binom(shelfProbes, k, p)
		}
		wrong = max(wrong, above)
	}
	assert.Less(t, wrong, 1e-20)
	t.Logf("floor %d: a right rule below it with chance %.2g (%.2g from the start), the fast shelf's delta at or above it %.2g",
		floor, below(floor, right), below(floor, fromStart), wrong)
}
