package main

import (
	"stampede/checker"
	"stampede/checker/check"
	"stampede/checker/grade"
)

// points is what case n is worth, by difficulty, out of 100: its
// check.Case.Points, the one place the weights are set, scaled to 100
// with the others' (checker.Points). The JSON report, `grade`'s class
// summary and .github/workflows/classroom.yml all follow it (the workflow
// is written from it). docs/instructors.md explains the choice.
//
// A case earns its points only when every check passes with the race
// detector on: a cache that serves everyone but stampedes, or races, is
// not a partial fix of a stampede. Checks passed on the way are shown, but
// score nothing.
func points(n int) int { return checker.Points(checker.Cases())[n] }

// allOrNothing is the rule of points in one sentence, as every table of
// points ends with it and docs/instructors.md quotes it.
const allOrNothing = "A case earns its points only when every check passes, race check included; " +
	"the checks passed on the way, such as 3/5, show progress and score nothing."

// maxPoints is the whole lab's worth.
func maxPoints() int {
	total := 0
	for _, p := range checker.Points(checker.Cases()) {
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
