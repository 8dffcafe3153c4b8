package main

import (
	"encoding/json"
	"io"

	"stampede/checker/check"
	"stampede/checker/grade"
)

// Schema names the JSON report's format. It changes only when a field is
// removed or changes meaning; new fields may appear without a change.
//
// v2: points are the case's weight when every check passes and 0 otherwise
// (v1 counted passed checks); a case's status may be "incomplete"; the
// report says which lab graded whom, and when.
const Schema = "stampede-lab/check/v2"

// Document is the JSON report of `check N --json` and `check all --json`,
// documented in docs/instructors.md.
type Document struct {
	Schema string `json:"schema"`
	Meta
	Code  string       `json:"code"` // "cases" (the student's) or "solutions"
	Cases []CaseReport `json:"cases"`
	Score Score        `json:"score"`
}

// CaseReport is one case's part of a Document.
type CaseReport struct {
	Case          int        `json:"case"`
	Title         string     `json:"title"`
	Dir           string     `json:"dir"`    // "cases/case01"
	Status        CaseStatus `json:"status"` // "pass", "fail" or "incomplete"
	Compiles      bool       `json:"compiles"`
	CompileErrors []string   `json:"compile_errors,omitempty"`
	RaceDetector  bool       `json:"race_detector"`
	NoRace        string     `json:"no_race,omitempty"` // why the race detector did not run
	Score         Score      `json:"score"`
	// Failing names the checks that failed or were flaky, by id, for a
	// case that compiles (CompileErrors says why one that does not failed).
	Failing []string       `json:"failing,omitempty"`
	Checks  []check.Result `json:"checks"`
}

// Score counts checks and points. A case's points are its weight
// (points) when every check passed, race check included, and 0
// otherwise; the check counts show progress but score nothing.
type Score struct {
	Passed          int `json:"passed"`  // checks
	Failed          int `json:"failed"`  // checks, flaky ones included
	Skipped         int `json:"skipped"` // checks that could not run here
	Points          int `json:"points"`
	MaxPoints       int `json:"max_points"`
	CasesPassed     int `json:"cases_passed"`
	CasesIncomplete int `json:"cases_incomplete"`
	CasesTotal      int `json:"cases_total"`
}

func (s *Score) add(o Score) {
	s.Passed += o.Passed
	s.Failed += o.Failed
	s.Skipped += o.Skipped
	s.Points += o.Points
	s.MaxPoints += o.MaxPoints
	s.CasesPassed += o.CasesPassed
	s.CasesIncomplete += o.CasesIncomplete
	s.CasesTotal += o.CasesTotal
}

// document builds the JSON report of some graded cases. Without verbose,
// the checks' long details (whole race reports and crashes) are left out.
func document(meta Meta, code string, reps []grade.Report, verbose bool) Document {
	doc := Document{Schema: Schema, Meta: meta, Code: code, Cases: []CaseReport{}}
	for _, rep := range reps {
		cr := caseReport(rep, verbose)
		doc.Score.add(cr.Score)
		doc.Cases = append(doc.Cases, cr)
	}
	return doc
}

func caseReport(rep grade.Report, verbose bool) CaseReport {
	c := rep.Target.Case
	cr := CaseReport{
		Case: c.Number, Title: c.Title, Dir: rep.Target.Dir(),
		Status: statusOfReport(rep), Compiles: rep.Build == nil,
		RaceDetector: rep.NoRace == "", NoRace: rep.NoRace,
		Checks: []check.Result{},
	}
	if rep.Build != nil {
		cr.CompileErrors = rep.Build.Lines
	}
	for _, r := range rep.Results {
		if !verbose {
			r.Detail = ""
		}
		cr.Checks = append(cr.Checks, r)
		switch r.Status {
		case check.Pass:
			cr.Score.Passed++
		case check.Skip:
			cr.Score.Skipped++
		default:
			cr.Score.Failed++
			if rep.Build == nil {
				cr.Failing = append(cr.Failing, r.ID)
			}
		}
	}
	cr.Score.MaxPoints = points(c.Number)
	cr.Score.CasesTotal = 1
	switch cr.Status {
	case CasePass:
		cr.Score.Points = cr.Score.MaxPoints
		cr.Score.CasesPassed = 1
	case CaseIncomplete:
		cr.Score.CasesIncomplete = 1
	}
	return cr
}

// writeJSON writes v as indented JSON in one write: a grader stopped half
// way prints nothing rather than half a report.
func writeJSON(w io.Writer, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(data, '\n'))
	return err
}
