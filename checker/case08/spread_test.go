package case08

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestBoundAsDocumented pins the figures the doc comment and the chapter
// quote.
func TestBoundAsDocumented(t *testing.T) {
	b, chance := busiestBound(2000, 0)
	assert.Equal(t, 108, b)
	assert.Less(t, chance, 1e-6)
	assert.Greater(t, 104*binomialTail(2000, 151.0/5000, b-1), 1e-6, "the bound is the smallest that holds")
}

// TestUniformDrawsPassWholeSecondsFail plays the statistics alone: many
// correct draws stay far under the bound; whole seconds and one draw per
// warm-up are far over it.
func TestUniformDrawsPassWholeSecondsFail(t *testing.T) {
	bound, _ := busiestBound(2000, 0)
	r := rand.New(rand.NewPCG(1, 2))
	worst := 0
	for range 200 {
		ls := make([]lifetime, 2000)
		for i := range ls {
			d := pageTTL + time.Duration(r.Int64N(int64(jitter)))/time.Millisecond*time.Millisecond
			ls[i] = lifetime{lo: d, hi: d}
		}
		n, _ := busiest(ls)
		worst = max(worst, n)
	}
	assert.Less(t, worst, bound-25, "a correct draw's busiest 100 ms")
	whole := make([]lifetime, 2000)
	for i := range whole {
		d := pageTTL + time.Duration(r.IntN(6))*time.Second
		whole[i] = lifetime{lo: d, hi: d}
	}
	n, _ := busiest(whole)
	assert.Greater(t, n, 2*bound)
}
