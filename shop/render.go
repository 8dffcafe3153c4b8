package main

import (
	"fmt"
	"io"
	"strings"
	"time"

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
func printReport(w io.Writer, rep grade.Report, took time.Duration) {
	if rep.Build != nil {
		red.Fprintf(w, "  FAIL  %s does not compile\n", rep.Target.Dir())
		for _, line := range rep.Build.Lines {
			fmt.Fprintf(w, "        %s\n", line)
		}
		fmt.Fprintln(w)
	}
	for _, r := range rep.Results {
		printResult(w, r)
	}
	passed, failed := rep.Counts()
	fmt.Fprintf(w, "\n%d passed, %d failed\n", passed, failed)
	if failed > 0 && rep.Build == nil {
		c := rep.Target.Case
		dim.Fprintf(w, "Stuck? Read %s, or ask for a hint: go run ./shop hint %d\n", c.Chapter, c.Number)
	}
	_ = took
}

func printResult(w io.Writer, r check.Result) {
	line := r.Name
	if r.Figure != "" {
		line += " (" + r.Figure + ")"
	}
	switch r.Status {
	case check.Pass:
		green.Fprint(w, "  PASS")
	case check.Skip:
		yellow.Fprint(w, "  SKIP")
	case check.Flaky:
		red.Fprint(w, "  FLAKY")
		line = fmt.Sprintf("%s [passed %d of %d runs]", line, r.Passed, r.Runs)
	default:
		red.Fprint(w, "  FAIL")
	}
	if r.Status == check.Pass && r.Runs > 1 {
		line = fmt.Sprintf("%s [%d/%d]", line, r.Passed, r.Runs)
	}
	fmt.Fprintf(w, "  %s\n", line)
	if r.Status != check.Pass && r.Message != "" {
		for _, m := range strings.Split(r.Message, "\n") {
			fmt.Fprintf(w, "        %s\n", m)
		}
	}
}
