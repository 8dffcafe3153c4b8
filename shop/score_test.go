package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"stampede/checker"
	"stampede/checker/check"
	"stampede/checker/grade"
)

func TestEveryCaseHasAWeightAndTheLabIsWorthAHundred(t *testing.T) {
	for _, c := range checker.Cases() {
		assert.Positive(t, points(c.Number), "case %d has no weight", c.Number)
	}
	assert.Equal(t, 100, maxPoints())
}

// report builds a report of case n whose checks have the given statuses.
func report(n int, noRace string, statuses ...check.Status) grade.Report {
	c, _ := checker.Find(n)
	rep := grade.Report{Target: grade.Student(c), NoRace: noRace}
	for i, st := range statuses {
		rep.Results = append(rep.Results, check.Result{ID: c.Checks[i%len(c.Checks)].ID, Name: "x", Status: st})
	}
	return rep
}

func TestACaseIsWorthItsPointsOnlyWhenEveryCheckPasses(t *testing.T) {
	P, F, S, K := check.Pass, check.Fail, check.Skip, check.Flaky
	for _, tc := range []struct {
		name   string
		rep    grade.Report
		status CaseStatus
		points int
	}{
		{"every check passes", report(4, "", P, P, P, P, P), CasePass, points(4)},
		{"one check fails", report(4, "", P, P, P, P, F), CaseFail, 0},
		{"one check is flaky", report(4, "", P, K, P, P, P), CaseFail, 0},
		{"no race detector", report(4, "this machine cannot build with the race detector", P, P, P, P, S), CaseIncomplete, 0},
		{"--no-race", report(4, noRaceOff, P, P, P, P, S), CaseIncomplete, 0},
		{"no race detector and a failure", report(4, noRaceOff, F, P, P, P, S), CaseFail, 0},
	} {
		cr := caseReport(tc.rep, false)
		assert.Equal(t, tc.status, cr.Status, tc.name)
		assert.Equal(t, tc.points, cr.Score.Points, tc.name)
		assert.Equal(t, points(4), cr.Score.MaxPoints, tc.name)
	}
	build := report(1, "")
	build.Build = &grade.BuildError{Lines: []string{"x"}}
	assert.Equal(t, CaseFail, statusOfReport(build), "code that does not compile")
}

// TestARaceLessGradeIsNeverAPass is issue 13's first problem: without the
// race detector, case 4's shipped code passed every other check, and the
// command said "pass" and exited 0.
func TestARaceLessGradeIsNeverAPass(t *testing.T) {
	rep := report(4, "this machine cannot build with the race detector", check.Pass, check.Pass, check.Pass, check.Pass, check.Skip)
	doc := document(Meta{}, "cases", []grade.Report{rep}, false)
	assert.Equal(t, CaseIncomplete, doc.Cases[0].Status)
	assert.Equal(t, 0, doc.Score.Points)
	assert.Equal(t, 0, doc.Score.CasesPassed)
	assert.Equal(t, 1, doc.Score.CasesIncomplete)
	assert.ErrorIs(t, verdictErr(doc), errIncomplete)

	var out bytes.Buffer
	printReport(&out, rep, false)
	assert.Contains(t, out.String(), "4 passed, 0 failed, 1 not run\n")
	assert.Contains(t, out.String(), "NOT GRADED HERE")
	assert.NotContains(t, out.String(), compilerAdvice, "said once, when the lab is compiled")
	assert.NotContains(t, out.String(), "Stuck?")

	out.Reset()
	printReport(&out, report(4, noRaceOff, check.Pass, check.Skip), false)
	assert.Contains(t, out.String(), "without --no-race")

	var js bytes.Buffer
	require.NoError(t, writeJSON(&js, doc))
	assert.Contains(t, js.String(), `"status": "incomplete"`)
}

// TestARaceLessCheckExitsNonZero grades the reference solution of case 1
// on a machine with no cgo, through the whole command: every check but the
// race check passes, and still the verdict is not a pass.
func TestARaceLessCheckExitsNonZero(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the worker")
	}
	t.Setenv("CGO_ENABLED", "0")
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"check", "1", "--solution", "--repeat", "1", "--json"}, &out, &errb)
	assert.Equal(t, exitIncomplete, code, errb.String())
	var doc Document
	require.NoError(t, json.Unmarshal(out.Bytes(), &doc), out.String())
	assert.Equal(t, CaseIncomplete, doc.Cases[0].Status)
	assert.False(t, doc.Cases[0].RaceDetector)
	assert.Equal(t, 0, doc.Score.Points)
	assert.Equal(t, 1, strings.Count(errb.String()+out.String(), compilerAdvice), "one line on getting a C compiler, once:\n%s", errb.String())
}

func TestFailLinesShowTheirRunsAndEveryLineItsID(t *testing.T) {
	var out bytes.Buffer
	printResult(&out, check.Result{ID: "served", Name: "all served", Status: check.Pass, Figure: "50 of 50", Runs: 3, Passed: 3}, false)
	printResult(&out, check.Result{ID: "once", Name: "once", Status: check.Fail, Figure: "ran 50", Runs: 3}, false)
	printResult(&out, check.Result{ID: "odd", Name: "odd", Status: check.Flaky, Runs: 3, Passed: 1}, false)
	printResult(&out, check.Result{ID: "solo", Name: "solo", Status: check.Fail, Runs: 1}, false)
	assert.Equal(t, ""+
		"  PASS  all served (50 of 50) [3/3]  #served\n"+
		"  FAIL  once (ran 50) [0/3]  #once\n"+
		"  FLAKY  odd [1/3]  #odd\n"+
		"  FAIL  solo  #solo\n", out.String())
}

// TestSummaryRowsLineUp: case 10's row is as wide as case 1's, so that
// the points and checks of every case stand in one column.
func TestSummaryRowsLineUp(t *testing.T) {
	doc := Document{Cases: []CaseReport{
		{Case: 9, Title: "Serve stale while one rebuilds", Status: CasePass, Score: Score{Points: 14, MaxPoints: 14}},
		{Case: 10, Title: "The stale set", Status: CaseFail, Score: Score{MaxPoints: 16}},
	}}
	var out bytes.Buffer
	printSummary(&out, doc)
	lines := strings.Split(out.String(), "\n")
	require.GreaterOrEqual(t, len(lines), 3)
	assert.Equal(t, strings.Index(lines[1], "points"), strings.Index(lines[2], "points"), "%s\n%s", lines[1], lines[2])
	assert.Equal(t, strings.Index(lines[1], "Serve"), strings.Index(lines[2], "The stale"))
}
