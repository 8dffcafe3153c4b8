package case07

import (
	"math"
	"testing"

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
