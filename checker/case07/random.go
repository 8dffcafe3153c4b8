package case07

import (
	"math/rand/v2"
	"sync"
)

// zeroOdds is how often the story's random source returns exactly 0: one
// draw in zeroOdds. rand.Float64 can return 0 too, once in about 2^53
// draws; `run 7` makes it common enough that code which takes the
// logarithm of a draw without ruling out 0 shows it in the story.
const zeroOdds = 100

// source is the random source a shop is given: like rand.Float64, a number
// in [0, 1), from a fixed seed, so that every run of a check sees the same
// numbers in the same order. It is safe for concurrent use.
//
// The checks' sources never return exactly 0 by chance, so that every rule
// that is right for a uniform draw is treated alike: -ln(u) with u = 1 -
// random(), u = random() < exp(-g/(delta*beta)), a redraw on 0. A 0 comes
// only when a scene asks for one (zeroNext), where it tells those rules
// from ln(0). A scene can also hold the next draw (holdNext) until it lets
// it go, to stop the reader who draws inside the shop.
type source struct {
	mu    sync.Mutex
	r     *rand.Rand
	zeros bool    // return 0 about once in zeroOdds (the story)
	fixed int     // return fix at the next fixed draws
	fix   float64 // what they return
	hold  chan struct{}
	held  chan struct{}
}

func newSource(seed uint64, zeros bool) *source {
	return &source{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), zeros: zeros}
}

// newRandom returns the story's source: 0 about once in zeroOdds draws.
func newRandom(seed uint64) func() float64 { return newSource(seed, true).draw }

// draw returns the next number.
func (s *source) draw() float64 {
	s.mu.Lock()
	hold, held := s.hold, s.held
	s.hold, s.held = nil, nil
	s.mu.Unlock()
	if hold != nil {
		close(held)
		<-hold
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fixed > 0 {
		s.fixed--
		return s.fix
	}
	if s.zeros && s.r.IntN(zeroOdds) == 0 {
		return 0
	}
	for {
		if u := s.r.Float64(); u > 0 {
			return u
		}
	}
}

// zeroNext makes the next draw exactly 0.
func (s *source) zeroNext() { s.fixNext(1, 0) }

// fixNext makes the next n draws return u.
func (s *source) fixNext(n int, u float64) {
	s.mu.Lock()
	s.fixed, s.fix = n, u
	s.mu.Unlock()
}

// holdNext stops the next draw, on the goroutine that asks for it, until
// release is called. reached is closed once a draw is being held.
func (s *source) holdNext() (reached <-chan struct{}, release func()) {
	hold, held := make(chan struct{}), make(chan struct{})
	s.mu.Lock()
	s.hold, s.held = hold, held
	s.mu.Unlock()
	var once sync.Once
	return held, func() { once.Do(func() { close(hold) }) }
}
