package fleet

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"stampede/checker/check"
	"stampede/checker/harness"
)

// The come-back rule of the Redis cases: visitors refused together must
// not be told to come back together. A fixed Retry-After sends every one
// of them back at the same instant, a second stampede one delay later;
// so does a delay drawn once (per process, per instance, per flight) and
// handed to everyone refused with it.
const (
	// ComeBackWindow is how close two come-backs count as one instant.
	ComeBackWindow = time.Millisecond
	// ComeBackRefused is how many visitors a come-back scene refuses at
	// once. No ComeBackWindow may hold more than a quarter of them.
	//
	// The false-fail chance, for an answer that draws each visitor's
	// delay on its own and evenly over at least 0.5 s (the contract; at
	// any resolution of 1 ms or finer): any 1 ms window lies within two
	// adjacent cells of a 1 ms grid, so it holds a given delay with
	// probability at most 0.004; there are at most 501 such pairs of
	// cells, so the chance that one holds more than 10 of 40 is at most
	// 501 * P(Binomial(40, 0.004) >= 11) < 1e-14.
	ComeBackRefused = 40
	// ComeBackSpread is the least the delays must span, half the 0.5 s
	// the contract asks them to be spread over. Delays drawn evenly over
	// 0.5 s all fall within some quarter second with probability at most
	// 40 * (1/2)^39 < 1e-10.
	ComeBackSpread = 250 * time.Millisecond
)

// ComeBackApart marks a come-back check Apart (see check.Apart): the
// grader plays its scene in two processes started alike and compares the
// delays each handed out (DrawnDelays). A generator with a fixed seed,
// shared by a process's instances, hands each visitor of one process its
// own delay, and every process of a fleet the same ones.
//
// Honest delays, drawn evenly over 0.5 s or more at 1 ms or finer, repeat
// across the two processes by chance: each of n delays of one falls on one
// of the other's n with probability at most n/500. Half of them shared,
// the bound, comes by chance with probability at most
// P(Binomial(n, n/500) >= n/2): below 2e-9 for n = 20, and below 1e-11
// for the 40 of cases 6, 9 and 10 and the 60 to 80 of case 8.
var ComeBackApart = &check.Apart{
	What:  "come-back delay",
	Harm:  "their refused crowds come back at the same instants: a stampede across the fleet",
	Fix:   "draw from math/rand/v2's top-level functions, or seed your generator from crypto/rand",
	Share: 0.5,
}

// DrawnDelays returns the delays errs carry, as the values a come-back
// check reports as drawn (check.Verdict's Drawn): sorted, once each, to
// the nanosecond ("1.204316527s").
func DrawnDelays(errs []error) []string {
	var out []string
	for _, d := range slices.Compact(delays(errs)) {
		out = append(out, d.String())
	}
	return out
}

// Afterer is what a "try again" error has: when to come back.
type Afterer interface{ RetryAfter() time.Duration }

// ComeBacks judges the errors of visitors refused together. It returns a
// figure ("40 told 0.5 s to 1.49 s, at most 1 in a millisecond") and,
// when they break the rule, why in plain words (else ""). An error that
// is not a "try again", or one that says to come back at once, is a
// failure too: the caller stages the refusal, so every visitor of it
// must have been refused.
func ComeBacks(errs []error) (figure, wrong string) {
	var afters []time.Duration
	for i, err := range errs {
		var later Afterer
		switch {
		case err == nil:
			return fmt.Sprintf("visitor %d of %d served", i+1, len(errs)), fmt.Sprintf("visitor %d of the %d "+
				"refused together was served, though the scene left nothing to serve it from", i+1, len(errs))
		case !errors.As(err, &later):
			return fmt.Sprintf("visitor %d: %v", i+1, err), fmt.Sprintf("visitor %d of the %d was told %q: a visitor past "+
				"its budget gets a *TryAgain, which says when to come back (its RetryAfter method)", i+1, len(errs), err)
		case later.RetryAfter() <= 0:
			return fmt.Sprintf("visitor %d: come back in %v", i+1, later.RetryAfter()), fmt.Sprintf("visitor %d of the %d "+
				"was told to come back in %v: say when", i+1, len(errs), later.RetryAfter())
		}
		afters = append(afters, later.RetryAfter())
	}
	if len(afters) == 0 {
		return "nobody refused", "the scene refused nobody: it did not happen as staged"
	}
	slices.Sort(afters)
	most, at := 0, afters[0]
	for i := range afters {
		j, _ := slices.BinarySearch(afters, afters[i]+ComeBackWindow)
		if j-i > most {
			most, at = j-i, afters[i]
		}
	}
	figure = fmt.Sprintf("%d told %v to %v, at most %d in a millisecond", len(afters), round(afters[0]),
		round(afters[len(afters)-1]), most)
	if spread := afters[len(afters)-1] - afters[0]; len(afters) >= ComeBackRefused/2 && spread < ComeBackSpread {
		return figure, fmt.Sprintf("the %d visitors refused together were told to come back within %v of each other "+
			"(%v to %v): they all come back in one burst. Spread the delays over half a second at least "+
			"(retryAfter/2 + rand.N(retryAfter), say)", len(afters), spread.Round(time.Millisecond), round(afters[0]),
			round(afters[len(afters)-1]))
	}
	if most > len(afters)/4 {
		return figure, fmt.Sprintf("%d of the %d visitors refused together were told to come back in %v (within a "+
			"millisecond): they will all come back at once, a second stampede one delay later. Draw each "+
			"visitor's delay on its own and spread it, over half a second at least (retryAfter/2 + "+
			"rand.N(retryAfter), say), also when visitors share one flight's refusal", most, len(afters), round(at))
	}
	return figure, ""
}

// FlightMates is the least number of flights, each refusing two visitors
// or more at one moment, that SharedFlights needs to judge.
//
// The false-fail chance: two delays drawn on their own, evenly over 0.5 s
// or more at 1 ms or finer, fall within a millisecond of each other with
// probability at most 0.004, so more than a quarter of 20 flights or more
// tell all their visitors one moment with probability at most
// P(Binomial(20, 0.004) >= 6) < 2e-10 (less for more flights).
const FlightMates = 20

// SharedFlights judges the delays of visitors refused at one moment,
// grouped by the flight they waited in (a page's readers, in case 8): when
// more than a quarter of the flights tell every visitor of theirs the
// same moment (within ComeBackWindow), the delay was drawn once per flight
// and handed to all its visitors. Spread over many small flights, such
// delays pass ComeBacks; for one hot key's crowd they are one moment. It
// returns why in plain words, or "" (also when fewer than FlightMates
// flights refused two visitors or more: too few to judge).
func SharedFlights(flights [][]error) string {
	judged, shared := 0, 0
	for _, errs := range flights {
		ds := delays(errs)
		if len(ds) < 2 {
			continue
		}
		judged++
		if ds[len(ds)-1]-ds[0] < ComeBackWindow {
			shared++
		}
	}
	if judged < FlightMates || shared*4 <= judged {
		return ""
	}
	return fmt.Sprintf("in %d of the %d flights that refused two visitors or more, every visitor was told the same "+
		"moment to come back: the delay is drawn once per flight and handed to all its visitors, so a hot key's crowd, "+
		"refused together, comes back together. Draw each visitor's delay as it leaves the flight", shared, judged)
}

// ComeBackVerdict is the come-back check's verdict on the visitors of two
// instances (shop-2's and shop-3's) refused at one moment: ComeBacks over
// them all, ApartDraws between the two, and on a pass their delays as
// drawn, for the grader's two processes (ComeBackApart). scene says what
// refused them, for the message ("shop-1 held the lock and never filled").
func ComeBackVerdict[T any](scene string, a, b *harness.Crowd[T]) check.Verdict {
	var each [2][]error
	for i, c := range []*harness.Crowd[T]{a, b} {
		for _, o := range c.Outcomes() {
			if o.Panic != "" {
				return check.Failed("", "a visitor's call panicked: "+o.Panic)
			}
			each[i] = append(each[i], o.Err)
		}
	}
	all := slices.Concat(each[0], each[1])
	figure, wrong := ComeBacks(all)
	if wrong == "" {
		wrong = ApartDraws(each[0], each[1], "shop-2", "shop-3")
	}
	if wrong != "" {
		return check.Failed(figure, scene+"; "+wrong)
	}
	pass := check.Passed(figure)
	pass.Drawn = DrawnDelays(all)
	return pass
}

// ApartDraws judges the delays two instances handed out to visitors
// refused at the same moment (named a and b): when the two lists are the
// same, delay for delay, the instances draw from generators seeded alike,
// and a fleet's servers send their crowds back in step. It returns why in
// plain words, or "". (Two honest lists of 20 delays drawn to the
// millisecond or finer over half a second are the same with probability
// below 500^-19.)
func ApartDraws(a, b []error, nameA, nameB string) string {
	da, db := delays(a), delays(b)
	if len(da) == 0 || !slices.Equal(da, db) {
		return ""
	}
	return fmt.Sprintf("%s and %s, whose visitors were refused at the same moment, told them the very same %d delays "+
		"(%v, ...): every instance draws from a generator seeded alike, so every server of a fleet sends its crowd back "+
		"at the same instants. Draw from math/rand/v2's top-level functions, or seed from crypto/rand",
		nameA, nameB, len(da), round(da[0]))
}

// delays returns the sorted delays of the errors that carry one.
func delays(errs []error) []time.Duration {
	var out []time.Duration
	for _, err := range errs {
		var later Afterer
		if errors.As(err, &later) {
			out = append(out, later.RetryAfter())
		}
	}
	slices.Sort(out)
	return out
}

func round(d time.Duration) time.Duration {
	if d < time.Second {
		return d.Round(time.Millisecond)
	}
	return d.Round(10 * time.Millisecond)
}
