package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/fatih/color"

	"stampede/checker/check"
	"stampede/checker/grade"
)

var (
	green  = color.New(color.FgGreen, color.Bold)
	red    = color.New(color.FgRed, color.Bold)
	yellow = color.New(color.FgYellow, color.Bold)
	dim    = color.New(color.Faint)
)

// printReport writes the PASS and FAIL lines of a report and the closing
// count. Colour follows fatih/color: off when NO_COLOR is set or stdout is
// not a terminal.
func printReport(w io.Writer, rep grade.Report, verbose bool) {
	if rep.Build != nil {
		red.Fprintf(w, "  FAIL  %s %s\n", rep.Target.Dir(), rep.Build.Problem())
		for _, line := range rep.Build.Lines {
			fmt.Fprintf(w, "        %s\n", line)
		}
		fmt.Fprintln(w)
	}
	for _, r := range rep.Results {
		printResult(w, r, verbose)
	}
	passed, failed := rep.Counts()
	fmt.Fprintf(w, "\n%d passed, %d failed\n", passed, failed)
	if failed > 0 && rep.Build == nil {
		c := rep.Target.Case
		dim.Fprintf(w, "Stuck? Read %s, or ask for a hint: go run ./shop hint %d\n", c.Chapter, c.Number)
	}
}

func printResult(w io.Writer, r check.Result, verbose bool) {
	line := r.Name
	if r.Figure != "" {
		line += " (" + r.Figure + ")"
	}
	switch r.Status {
	case check.Pass:
		green.Fprint(w, "  PASS")
		if r.Runs > 1 {
			line = fmt.Sprintf("%s [%d/%d]", line, r.Passed, r.Runs)
		}
	case check.Skip:
		yellow.Fprint(w, "  SKIP")
	case check.Flaky:
		red.Fprint(w, "  FLAKY")
		line = fmt.Sprintf("%s [passed %d/%d]", line, r.Passed, r.Runs)
	default:
		red.Fprint(w, "  FAIL")
	}
	fmt.Fprintf(w, "  %s\n", line)
	if r.Status != check.Pass && r.Message != "" {
		for _, m := range strings.Split(r.Message, "\n") {
			fmt.Fprintf(w, "        %s\n", m)
		}
	}
	if r.Detail != "" {
		if verbose {
			for _, m := range strings.Split(strings.TrimRight(r.Detail, "\n"), "\n") {
				dim.Fprintf(w, "        | %s\n", m)
			}
		} else {
			dim.Fprintln(w, "        (the whole report: add --verbose)")
		}
	}
}

// printSummary writes the table of `check all`.
func printSummary(w io.Writer, doc Document) {
	fmt.Fprintln(w, "Summary")
	for _, c := range doc.Cases {
		mark := red.Sprint("FAIL")
		if c.Status == check.Pass {
			mark = green.Sprint("PASS")
		}
		fmt.Fprintf(w, "  %s  case %d  %-36s %d/%d checks\n", mark, c.Case, c.Title, c.Score.Passed, c.Score.MaxPoints)
	}
	fmt.Fprintf(w, "\n%d of %d cases solved\n", doc.Score.CasesPassed, doc.Score.CasesTotal)
}
