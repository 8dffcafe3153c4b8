package main

import (
	"stampede/checker/check"
	"stampede/checker/grade"
)

// casePoints is what each case is worth, by difficulty, out of 100. This
// table is the one place the weights are set: the JSON report, `grade`'s
// class summary and .github/workflows/classroom.yml all follow it (a test
// keeps the workflow in step). docs/instructors.md explains the choice.
//
// A case earns its points only when every check passes with the race
// detector on: a cache that serves everyone but stampedes, or races, is
// not a partial fix of a stampede. Checks passed on the way are shown, but
// score nothing.
var casePoints = map[int]int{
	1:  6,  // single-flight with a second look: the idea the rest builds on
	2:  6,  // a lock per shelf instead of one for the shop
	3:  6,  // the second look, on its own
	4:  8,  // the memory model: a read needs a lock too
	5:  8,  // error paths: panics, cancelled callers, nothing cached on failure
	6:  12, // a lock across a fleet, on Redis: tokens, expiry, safe release
	7:  12, // XFetch: early refresh by probability, on virtual time
	8:  12, // keys set together: jitter by statistics, a bound on rebuilds for the cold start
	9:  14, // serve stale: two expiries, a rebuild that outlives its visitor, a delete never covered
	10: 16, // the stale set: delete after commit, leases, the stale leader's conflict
}

// allOrNothing is the rule of points in one sentence, as every table of
// points ends with it and docs/instructors.md quotes it.
const allOrNothing = "A case earns its points only when every check passes, race check included; " +
	"the checks passed on the way, such as 3/5, show progress and score nothing."

// maxPoints is the whole lab's worth.
func maxPoints() int {
	total := 0
	for _, p := range casePoints {
		total += p
	}
	return total
}

// CaseStatus is a case's verdict in a report.
type CaseStatus string

// The case verdicts.
const (
	CasePass CaseStatus = "pass" // every check passed, the race check among them
	CaseFail CaseStatus = "fail" // a check failed, or the code does not compile
	// CaseIncomplete: no check failed, but the race check could not run
	// here (no C compiler, or --no-race). It is not a pass and scores
	// nothing: case 4's whole lesson is the race.
	CaseIncomplete CaseStatus = "incomplete"
)

// statusOfReport decides a case's verdict from its report: a failed check
// fails it; otherwise a check that did not run (the race check without a
// race detector) leaves it incomplete.
func statusOfReport(rep grade.Report) CaseStatus {
	if rep.Build != nil {
		return CaseFail
	}
	incomplete := rep.NoRace != "" || len(rep.Results) == 0
	for _, r := range rep.Results {
		switch r.Status {
		case check.Pass:
		case check.Skip:
			incomplete = true
		default:
			return CaseFail
		}
	}
	if incomplete {
		return CaseIncomplete
	}
	return CasePass
}
