package main

import (
	"context"
	"flag"
	"fmt"
	"io"

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
	Solved     Status = "solved"      // every check passes
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
	if rep.Passed() {
		return Solved, nil
	}
	return Failing, nil
}

func listCmd(ctx context.Context, args []string, stdout io.Writer) error {
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
	solved := 0
	for _, c := range cases {
		st, err := statusOf(ctx, root, c)
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
		default:
			mark = dim.Sprint(mark)
		}
		fmt.Fprintf(stdout, "%2d  %-36s %s  %s\n", c.Number, c.Title, mark, c.Summary)
	}
	fmt.Fprintf(stdout, "\n%d of %d solved\n", solved, len(cases))
	return nil
}
