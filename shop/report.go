package main

import (
	"encoding/json"
	"io"

	"stampede/checker/check"
	"stampede/checker/grade"
)

// Schema names the JSON report's format. It changes only when a field is
// removed or changes meaning; new fields may appear without a change.
const Schema = "stampede-lab/check/v1"

// Document is the JSON report of `check N --json` and `check all --json`,
// documented in docs/instructors.md.
type Document struct {
	Schema string       `json:"schema"`
	Code   string       `json:"code"` // "cases" (the student's) or "solutions"
	Cases  []CaseReport `json:"cases"`
	Score  Score        `json:"score"`
}

// CaseReport is one case's part of a Document.
type CaseReport struct {
	Case          int            `json:"case"`
	Title         string         `json:"title"`
	Dir           string         `json:"dir"`    // "cases/case01"
	Status        check.Status   `json:"status"` // "pass" when every check passed or was skipped
	Compiles      bool           `json:"compiles"`
	CompileErrors []string       `json:"compile_errors,omitempty"`
	RaceDetector  bool           `json:"race_detector"`
	Score         Score          `json:"score"`
	Checks        []check.Result `json:"checks"`
}

// Score counts checks. Points are passed checks, so that a classroom
// autograder can give partial credit; MaxPoints counts every check that was
// not skipped.
type Score struct {
	Passed      int `json:"passed"`
	Failed      int `json:"failed"`
	Skipped     int `json:"skipped"`
	Points      int `json:"points"`
	MaxPoints   int `json:"max_points"`
	CasesPassed int `json:"cases_passed"`
	CasesTotal  int `json:"cases_total"`
}

func (s *Score) add(o Score) {
	s.Passed += o.Passed
	s.Failed += o.Failed
	s.Skipped += o.Skipped
	s.Points += o.Points
	s.MaxPoints += o.MaxPoints
	s.CasesPassed += o.CasesPassed
	s.CasesTotal += o.CasesTotal
}

// document builds the JSON report of some graded cases. Without verbose,
// the checks' long details (whole race reports and crashes) are left out.
func document(code string, reps []grade.Report, verbose bool) Document {
	doc := Document{Schema: Schema, Code: code, Cases: []CaseReport{}}
	for _, rep := range reps {
		c := rep.Target.Case
		cr := CaseReport{
			Case: c.Number, Title: c.Title, Dir: rep.Target.Dir(),
			Status: check.Fail, Compiles: rep.Build == nil, RaceDetector: rep.NoRace == "",
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
			}
		}
		cr.Score.Points = cr.Score.Passed
		cr.Score.MaxPoints = cr.Score.Passed + cr.Score.Failed
		cr.Score.CasesTotal = 1
		if rep.Passed() {
			cr.Status = check.Pass
			cr.Score.CasesPassed = 1
		}
		doc.Score.add(cr.Score)
		doc.Cases = append(doc.Cases, cr)
	}
	return doc
}

func writeJSON(w io.Writer, doc Document) error {
	// One write of the whole document: a grader stopped half way prints
	// nothing rather than half a report.
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(data, '\n'))
	return err
}
