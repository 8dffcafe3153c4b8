package fleet

import (
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

type later time.Duration

func (l later) Error() string             { return "try again" }
func (l later) RetryAfter() time.Duration { return time.Duration(l) }

func refusals(after func(i int) time.Duration) []error {
	errs := make([]error, ComeBackRefused)
	for i := range errs {
		errs[i] = later(after(i))
	}
	return errs
}

func TestComeBacksPassesADelayDrawnPerVisitor(t *testing.T) {
	for range 1000 {
		_, wrong := ComeBacks(refusals(func(int) time.Duration { return 500*time.Millisecond + rand.N(time.Second) }))
		assert.Empty(t, wrong)
	}
	// Whole milliseconds over half a second are enough too.
	for range 1000 {
		_, wrong := ComeBacks(refusals(func(int) time.Duration {
			return 750*time.Millisecond + time.Duration(rand.N(500))*time.Millisecond
		}))
		assert.Empty(t, wrong)
	}
	// So is a counter over half a second: every visitor its own moment.
	_, wrong := ComeBacks(refusals(func(i int) time.Duration { return time.Second + time.Duration(i)*15*time.Millisecond }))
	assert.Empty(t, wrong)
}

func TestComeBacksFailsAHerd(t *testing.T) {
	one := 500*time.Millisecond + rand.N(time.Second)
	wrongs := map[string]func(i int) time.Duration{
		"fixed":          func(int) time.Duration { return time.Second },
		"drawn once":     func(int) time.Duration { return one },
		"per instance":   func(i int) time.Duration { return time.Second + time.Duration(i%2)*300*time.Millisecond },
		"whole seconds":  func(int) time.Duration { return time.Duration(1+rand.N(3)) * time.Second },
		"within a micro": func(int) time.Duration { return time.Second + rand.N(time.Microsecond) },
	}
	for name, after := range wrongs {
		_, wrong := ComeBacks(refusals(after))
		assert.NotEmpty(t, wrong, name)
	}
	_, wrong := ComeBacks([]error{later(time.Second), errors.New("busy")})
	assert.Contains(t, wrong, `told "busy"`)
	_, wrong = ComeBacks([]error{later(time.Second), nil})
	assert.Contains(t, wrong, "was served")
	_, wrong = ComeBacks([]error{later(0)})
	assert.Contains(t, wrong, "say when")
	_, wrong = ComeBacks(nil)
	assert.Contains(t, wrong, "refused nobody")
}

func TestApartDrawsFailsGeneratorsSeededAlike(t *testing.T) {
	draw := func(r *rand.Rand) []error {
		errs := make([]error, ComeBackRefused/2)
		for i := range errs {
			errs[i] = later(500*time.Millisecond + time.Duration(r.Int64N(int64(time.Second))))
		}
		return errs
	}
	same := func() *rand.Rand { return rand.New(rand.NewPCG(1, 2)) }
	assert.Contains(t, ApartDraws(draw(same()), draw(same()), "shop-2", "shop-3"), "the very same 20 delays")
	for range 100 {
		a := refusals(func(int) time.Duration { return 500*time.Millisecond + time.Duration(rand.N(1000))*time.Millisecond })
		b := refusals(func(int) time.Duration { return 500*time.Millisecond + time.Duration(rand.N(1000))*time.Millisecond })
		assert.Empty(t, ApartDraws(a[:20], b[:20], "shop-2", "shop-3"))
	}
}

// Forty flights of two visitors (case 8's budget scene): a delay drawn per
// visitor passes, whole milliseconds over half a second too; one drawn per
// flight fails; too few flights are not judged.
func TestSharedFlightsFailsADelayPerFlight(t *testing.T) {
	flights := func(n int, draw func() time.Duration, perFlight bool) [][]error {
		out := make([][]error, n)
		for i := range out {
			d := draw()
			for range 2 {
				if !perFlight {
					d = draw()
				}
				out[i] = append(out[i], later(d))
			}
		}
		return out
	}
	even := func() time.Duration { return 500*time.Millisecond + rand.N(time.Second) }
	wholeMs := func() time.Duration { return 750*time.Millisecond + time.Duration(rand.N(500))*time.Millisecond }
	for range 2000 {
		assert.Empty(t, SharedFlights(flights(40, even, false)))
		assert.Empty(t, SharedFlights(flights(FlightMates, wholeMs, false)))
	}
	assert.Contains(t, SharedFlights(flights(40, even, true)), "in 40 of the 40 flights")
	assert.Empty(t, SharedFlights(flights(FlightMates-1, even, true)), "too few flights to judge")
	lone := [][]error{{later(time.Second)}}
	assert.Empty(t, SharedFlights(append(lone, flights(FlightMates-1, even, true)...)), "a flight of one visitor is not judged")
}
