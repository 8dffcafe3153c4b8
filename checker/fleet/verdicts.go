package fleet

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"stampede/checker/check"
	"stampede/checker/harness"
)

// The verdicts the Redis cases' checks share about their visitors: a
// scene that never came to rest or ran out of time, a visitor who got a
// price it should not have, or an error.

// StuckVerdict fails a check whose visitors never finished, err being
// what the scene's driver said, with a hint when the stacks show a wait
// on something other than the scene's clock.
func StuckVerdict(err error) check.Verdict {
	msg := "the visitors never finished: " + err.Error()
	if strings.Contains(msg, " in sleep") || strings.Contains(msg, " in select") {
		msg += " (wait with the clock New is given, clk.Sleep, not time.Sleep, time.After or a ticker: the checker moves that clock by hand)"
	}
	return check.Failed("", msg)
}

// WaitVerdict fails a check whose visitors did not finish: still waiting
// after patience of the shops' clock (ErrNoBound), or stuck.
func WaitVerdict(err error, who string, patience time.Duration) check.Verdict {
	if errors.Is(err, ErrNoBound) {
		return check.Failed("", fmt.Sprintf("%s still waiting after %v of the shops' clock", who, patience))
	}
	return StuckVerdict(err)
}

// GotOne checks that every visitor of c returned one of the prices, in
// cents.
func GotOne(c *harness.Crowd[int], who string, prices ...int) check.Verdict {
	for _, o := range c.Outcomes() {
		if why := callFailed(o, who); why != "" {
			return check.Failed("", why)
		}
		if !slices.Contains(prices, o.Value) {
			want := make([]string, len(prices))
			for i, p := range prices {
				want[i] = Cents(p)
			}
			return check.Failed("", fmt.Sprintf("%s got %s; the price was %s", who, Cents(o.Value), strings.Join(want, " or ")))
		}
	}
	return check.Passed("")
}

// Wrote checks that every write of c returned without an error.
func Wrote(c *harness.Crowd[int], who string) check.Verdict {
	for _, o := range c.Outcomes() {
		if why := callFailed(o, who); why != "" {
			return check.Failed("", why)
		}
	}
	return check.Passed("")
}

// callFailed says how who's call failed (a panic or an error), or "".
func callFailed(o harness.Outcome[int], who string) string {
	switch {
	case o.Panic != "":
		return who + "'s call panicked: " + o.Panic
	case o.Err != nil:
		return fmt.Sprintf("%s got an error: %v", who, o.Err)
	}
	return ""
}

// Cents prints a price: 1299 is 12.99.
func Cents(p int) string { return fmt.Sprintf("%d.%02d", p/100, p%100) }

// Count says "1 read" or "3 reads".
func Count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
