package main

import (
	"context"
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
	printClosing(w, rep)
}

// gradePrinting grades target as grade.Grade does and prints its report to
// w as it goes: each PASS or FAIL line the moment the grader knows it (in
// the case's order), so that the first lines show while the slower checks
// still run, then the closing count.
func gradePrinting(ctx context.Context, w io.Writer, target grade.Target, opts grade.Options, verbose bool) (grade.Report, error) {
	opts.Decided = func(r check.Result) { printResult(w, r, verbose) }
	rep, err := grade.Grade(ctx, target, opts)
	switch {
	case err != nil:
	case rep.Build != nil:
		printReport(w, rep, verbose) // no check ran: nothing is printed yet
	default:
		printClosing(w, rep)
	}
	return rep, err
}

// printClosing writes what follows a report's PASS and FAIL lines: the
// counts, and what to do next. With the lines printed one by one as the
// grader decides them (grade.Options.Decided), it is all that is left
// once the grade is done.
func printClosing(w io.Writer, rep grade.Report) {
	skipped := 0
	for _, r := range rep.Results {
		if r.Status == check.Skip {
			skipped++
		}
	}
	passed, failed := rep.Counts()
	fmt.Fprintf(w, "\n%d passed, %d failed", passed, failed)
	if skipped > 0 {
		fmt.Fprintf(w, ", %d not run", skipped)
	}
	fmt.Fprintln(w)
	c := rep.Target.Case
	switch statusOfReport(rep) {
	case CaseIncomplete:
		yellow.Fprintf(w, "NOT GRADED HERE: no check failed, but the race check did not run, so case %d is not passed. Why: %s.\n",
			c.Number, orDefault(rep.NoRace, "a check was skipped"))
		// How to get the race detector was said once, when the lab was
		// compiled (see prepare): not again under every case.
		if rep.NoRace == noRaceOff {
			fmt.Fprintln(w, "Check again without --no-race for the verdict.")
		}
	case CaseFail:
		if failed > 0 && rep.Build == nil {
			dim.Fprintf(w, "Stuck? Read %s, or ask for a hint: go run ./shop hint %d\n", c.Chapter, c.Number)
		}
	}
}

// noRaceOff is the grader's reason when --no-race turned the detector off.
const noRaceOff = "the race detector was turned off"

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// printResult writes one check's line: its verdict, what it checks, the
// figure, how many runs passed, and its id (the name the chapters and
// JSON reports use), then the message of a check that did not pass.
func printResult(w io.Writer, r check.Result, verbose bool) {
	line := r.Name
	if r.Figure != "" {
		line += " (" + r.Figure + ")"
	}
	if r.Runs > 1 {
		line = fmt.Sprintf("%s [%d/%d]", line, r.Passed, r.Runs)
	}
	switch r.Status {
	case check.Pass:
		green.Fprint(w, "  PASS")
	case check.Skip:
		yellow.Fprint(w, "  SKIP")
	case check.Flaky:
		red.Fprint(w, "  FLAKY")
	default:
		red.Fprint(w, "  FAIL")
	}
	fmt.Fprintf(w, "  %s", line)
	if r.ID != "" {
		dim.Fprintf(w, "  #%s", r.ID)
	}
	fmt.Fprintln(w)
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

// mark is a case's verdict as the summaries show it.
func mark(st CaseStatus) string {
	switch st {
	case CasePass:
		return green.Sprint("PASS      ")
	case CaseIncomplete:
		return yellow.Sprint("NOT GRADED")
	}
	return red.Sprint("FAIL      ")
}

// printSummary writes the table of `check all`: each case's verdict, its
// points (all or nothing) and, for progress, its checks passed.
func printSummary(w io.Writer, doc Document) {
	fmt.Fprintln(w, "Summary")
	for _, c := range doc.Cases {
		fmt.Fprintf(w, "  %s  case %-2d  %-36s %3d/%-3d points  %d/%d checks\n",
			mark(c.Status), c.Case, c.Title, c.Score.Points, c.Score.MaxPoints, c.Score.Passed, len(c.Checks))
	}
	fmt.Fprintf(w, "\n%d of %d cases solved: %d of %d points",
		doc.Score.CasesPassed, doc.Score.CasesTotal, doc.Score.Points, doc.Score.MaxPoints)
	if doc.Score.CasesIncomplete > 0 {
		fmt.Fprintf(w, " (%d not graded here: no race detector)", doc.Score.CasesIncomplete)
	}
	fmt.Fprintln(w)
	dim.Fprintln(w, allOrNothing)
}
