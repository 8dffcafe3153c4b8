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
	b, chance := busiestBound(pages, 0)
	assert.Equal(t, 65, b)
	assert.Less(t, chance, 1e-6)
	assert.Greater(t, 104*binomialTail(pages, 151.0/5000, b-1), 1e-6, "the bound is the smallest that holds")
	b, _ = busiestBound(2000, 0)
	assert.Equal(t, 108, b)
}

// TestUniformDrawsPassWholeSecondsFail plays the statistics alone: many
// correct draws stay far under the bound; whole seconds and one draw per
// warm-up are far over it.
func TestUniformDrawsPassWholeSecondsFail(t *testing.T) {
	bound, _ := busiestBound(pages, 0)
	r := rand.New(rand.NewPCG(1, 2))
	worst := 0
	for range 200 {
		ls := make([]lifetime, pages)
		for i := range ls {
			d := pageTTL + time.Duration(r.Int64N(int64(jitter)))/time.Millisecond*time.Millisecond
			ls[i] = lifetime{lo: d, hi: d}
		}
		n, _ := busiest(ls)
		worst = max(worst, n)
	}
	assert.Less(t, worst, bound-15, "a correct draw's busiest 100 ms")
	whole := make([]lifetime, pages)
	for i := range whole {
		d := pageTTL + time.Duration(r.IntN(6))*time.Second
		whole[i] = lifetime{lo: d, hi: d}
	}
	n, _ := busiest(whole)
	assert.Greater(t, n, 2*bound)
}
