package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"slices"

	"stampede/checker"
	"stampede/checker/check"
	"stampede/checker/grade"
)

// Status is where a student stands on a case.
type Status string

// The statuses `list` shows.
const (
	NotStarted Status = "not started" // cases/caseNN is as the lab ships it
	Failing    Status = "failing"     // changed, and a check fails
	Solved     Status = "solved"      // every check passes, the race check among them
	// Unchecked: changed, and no check fails, but the race check cannot
	// run on this machine, so it is not solved either.
	Unchecked Status = "not graded"
)

// statusOf finds where the student stands on case c: by comparing the
// case with the shipped copy, and when it differs, by checking it once.
func statusOf(ctx context.Context, root string, c check.Case) (Status, error) {
	if same, err := checker.Pristine(root, c); err == nil && same {
		return NotStarted, nil
	}
	rep, err := grade.Grade(ctx, grade.Student(c), grade.Options{Root: root, Repeat: 1})
	if err != nil {
		return "", err
	}
	switch statusOfReport(rep) {
	case CasePass:
		return Solved, nil
	case CaseIncomplete:
		return Unchecked, nil
	}
	return Failing, nil
}

func listCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("list", flag.ContinueOnError)
	rest, err := parse(fs, args, false)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usagef("list takes no arguments")
	}
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	cases := checker.Cases()
	// Only a case that differs from the shipped copy is checked, so only
	// those need compiling: on a fresh clone, list compiles nothing.
	var changed []check.Case
	for _, c := range cases {
		if same, err := checker.Pristine(root, c); err != nil || !same {
			changed = append(changed, c)
		}
	}
	p := newProgress(stderr)
	noRace := ""
	if len(changed) > 0 {
		if noRace, err = prepare(ctx, root, true, changed, p); err != nil {
			return err
		}
	}
	solved := 0
	for _, c := range cases {
		// A changed case is checked once: a few seconds each. On a
		// terminal a line says so until the case's row replaces it;
		// elsewhere each row is printed as soon as its case is known.
		if slices.ContainsFunc(changed, func(x check.Case) bool { return x.Number == c.Number }) {
			p.Status("checking case %d (cases/%s changed since it shipped)...", c.Number, c.Dir())
		}
		st, err := statusOf(ctx, root, c)
		p.Clear()
		if err != nil {
			return err
		}
		mark := fmt.Sprintf("%-11s", st)
		switch st {
		case Solved:
			solved++
			mark = green.Sprint(mark)
		case Failing:
			mark = red.Sprint(mark)
		case Unchecked:
			mark = yellow.Sprint(mark)
		default:
			mark = dim.Sprint(mark)
		}
		fmt.Fprintf(stdout, "%2d  %-36s %s  %s\n", c.Number, c.Title, mark, c.Summary)
	}
	fmt.Fprintf(stdout, "\n%d of %d solved\n", solved, len(cases))
	if noRace != "" {
		yellow.Fprintf(stdout, "No case can be solved here: %s (how to get it is said above).\n", noRace)
	}
	return nil
}
