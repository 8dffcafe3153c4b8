package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"stampede/checker/grade"
)

func checkCmd(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	solution := fs.Bool("solution", false, "grade the reference solution instead of your code")
	repeat := fs.Int("repeat", 1, "run each check this many times")
	noRace := fs.Bool("no-race", false, "build without the race detector")
	rest, err := parse(fs, args, false)
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		return usagef("check takes one case number, such as: go run ./shop check 1")
	}
	if *repeat < 1 {
		return usagef("--repeat must be at least 1")
	}
	c, err := caseArg(rest[0])
	if err != nil {
		return err
	}
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	target := grade.Student(c)
	if *solution {
		target = grade.Solution(c)
	}
	fmt.Fprintf(stdout, "Case %d: %s (checking %s)\n\n", c.Number, c.Title, target.Dir())
	began := time.Now()
	rep, err := grade.Grade(ctx, target, grade.Options{Root: root, NoRace: *noRace, Repeat: *repeat})
	if err != nil {
		return err
	}
	printReport(stdout, rep, time.Since(began))
	if !rep.Passed() {
		return errFailed
	}
	return nil
}
