package case07

import (
	"math/rand/v2"
	"sync"
)

// zeroOdds is how often the lab's random source returns exactly 0: one
// draw in zeroOdds. rand.Float64 can return 0 too, once in about 2^53
// draws; the lab makes it common enough that code which takes the
// logarithm of a draw without ruling out 0 shows it in every run.
const zeroOdds = 100

// newRandom returns the random source a shop is given: like rand.Float64,
// a number in [0, 1), from a fixed seed, so that every run of a check sees
// the same numbers in the same order. It is safe for concurrent use.
func newRandom(seed uint64) func() float64 {
	var mu sync.Mutex
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	return func() float64 {
		mu.Lock()
		defer mu.Unlock()
		if r.IntN(zeroOdds) == 0 {
			return 0
		}
		return r.Float64()
	}
}
