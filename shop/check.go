package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"

	"stampede/checker"
	"stampede/checker/check"
	"stampede/checker/grade"
)

// defaultRepeat is how many times `check` runs a check whose verdict on a
// wrong answer may vary from run to run (check.Info.Varies), so that a
// lucky run cannot pass it; every other check plays one schedule, gives an
// answer one verdict in every run, and runs once (check.Info.RunsOf). See
// docs/instructors.md.
const defaultRepeat = 3

type checkFlags struct {
	solution, json, verbose, noRace bool
	repeat                          int
	redis, cases                    string
	seed                            uint64
}

func checkCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var f checkFlags
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.BoolVar(&f.solution, "solution", false, "grade the reference solution instead of your code")
	fs.IntVar(&f.repeat, "repeat", defaultRepeat, "run each check that varies this many times, and the others once for every three")
	fs.BoolVar(&f.json, "json", false, "print one JSON document instead of PASS/FAIL lines")
	fs.BoolVar(&f.verbose, "verbose", false, "show whole race reports and crashes")
	fs.BoolVar(&f.noRace, "no-race", false, "build without the race detector (no case can pass)")
	fs.Uint64Var(&f.seed, "seed", 0, "replay the random scenes of this seed (a failing check names its seed)")
	fs.StringVar(&f.redis, "redis", "", "a real Redis or Valkey server for the Redis cases, as redis://HOST:PORT/DB")
	fs.StringVar(&f.cases, "cases", "", "grade this folder's cases/ (another clone) with this lab's checker")
	rest, err := parse(fs, args, false)
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		return usagef("check takes one case number or all, such as: go run ./shop check 1")
	}
	if f.repeat < 1 {
		return usagef("--repeat must be at least 1")
	}
	if f.solution && f.cases != "" {
		return usagef("--solution and --cases each say what to grade: give one")
	}
	cases := checker.Cases()
	if rest[0] != "all" {
		c, err := caseArg(rest[0])
		if err != nil {
			return err
		}
		cases = []check.Case{c}
	}
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	sub, err := resolveSubmission(root, f.cases)
	if err != nil {
		return err
	}
	p := newProgress(stderr)
	url, note, err := redisServer(ctx, cases, f.redis)
	if err != nil {
		return err
	}
	if note != "" {
		p.Line("%s", note)
	}
	if url != "" {
		// The children inherit the environment; the Redis cases read it.
		if err := os.Setenv(redisVar, url); err != nil {
			return err
		}
	}

	if f.noRace {
		p.Line("%s", noRaceAdvice)
	}
	if _, err := prepare(ctx, root, !f.noRace, cases, p); err != nil {
		return err
	}

	var reps []grade.Report
	for i, c := range cases {
		target := sub.target(c)
		if f.solution {
			target = grade.Solution(c)
		}
		if f.json {
			p.Step(i+1, len(cases), fmt.Sprintf("checking case %d: %s", c.Number, c.Title))
		} else {
			fmt.Fprintf(stdout, "Case %d: %s (checking %s)\n\n", c.Number, c.Title, sub.show(target))
		}
		opts := grade.Options{Root: root, NoRace: f.noRace, Repeat: f.repeat, Seed: f.seed}
		var rep grade.Report
		if f.json {
			rep, err = grade.Grade(ctx, target, opts)
		} else {
			rep, err = gradePrinting(ctx, stdout, target, opts, f.verbose)
		}
		if err != nil {
			return err
		}
		reps = append(reps, rep)
		if !f.json {
			fmt.Fprintln(stdout)
		}
	}
	p.Clear()

	code := "cases"
	if f.solution {
		code = "solutions"
	}
	doc := document(sub.meta(ctx, root, os.Getenv), code, reps, f.verbose)
	if f.json {
		if err := writeJSON(stdout, doc); err != nil {
			return err
		}
	} else if len(reps) > 1 {
		printSummary(stdout, doc)
	}
	return verdictErr(doc)
}

// verdictErr turns a report into the command's result: a failed case
// fails it; otherwise a case not graded in full leaves it incomplete.
func verdictErr(doc Document) error {
	switch {
	case doc.Score.CasesPassed+doc.Score.CasesIncomplete < doc.Score.CasesTotal:
		return errFailed
	case doc.Score.CasesIncomplete > 0:
		return errIncomplete
	}
	return nil
}
