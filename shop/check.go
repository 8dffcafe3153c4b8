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

// defaultRepeat is how many times `check` runs each check unless told
// otherwise. The checks decide by counts and settled states, so a correct
// answer passes every run; repeating is for the wrong answers whose harm
// depends on the schedule (a lock table without a guard makes two locks
// only sometimes), so that a lucky run cannot pass them. Three runs keep a
// check to a few seconds on two cores. See docs/instructors.md.
const defaultRepeat = 3

type checkFlags struct {
	solution, json, verbose, noRace bool
	repeat                          int
	redis                           string
	seed                            uint64
}

func checkCmd(ctx context.Context, args []string, stdout io.Writer) error {
	var f checkFlags
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.BoolVar(&f.solution, "solution", false, "grade the reference solution instead of your code")
	fs.IntVar(&f.repeat, "repeat", defaultRepeat, "run each check this many times")
	fs.BoolVar(&f.json, "json", false, "print one JSON document instead of PASS/FAIL lines")
	fs.BoolVar(&f.verbose, "verbose", false, "show whole race reports and crashes")
	fs.BoolVar(&f.noRace, "no-race", false, "build without the race detector")
	fs.Uint64Var(&f.seed, "seed", 0, "replay the random scenes of this seed (a failing check names its seed)")
	fs.StringVar(&f.redis, "redis", "", "a real Redis or Valkey server for case 6, as redis://HOST:PORT/DB")
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
	if f.redis != "" {
		// The children inherit the environment; case 6 reads REDIS_URL.
		if err := os.Setenv("REDIS_URL", f.redis); err != nil {
			return err
		}
	}

	var reps []grade.Report
	for _, c := range cases {
		target := grade.Student(c)
		if f.solution {
			target = grade.Solution(c)
		}
		if !f.json {
			fmt.Fprintf(stdout, "Case %d: %s (checking %s)\n\n", c.Number, c.Title, target.Dir())
		}
		rep, err := grade.Grade(ctx, target, grade.Options{Root: root, NoRace: f.noRace, Repeat: f.repeat, Seed: f.seed})
		if err != nil {
			return err
		}
		reps = append(reps, rep)
		if !f.json {
			printReport(stdout, rep, f.verbose)
			fmt.Fprintln(stdout)
		}
	}

	code := "cases"
	if f.solution {
		code = "solutions"
	}
	doc := document(code, reps, f.verbose)
	if f.json {
		if err := writeJSON(stdout, doc); err != nil {
			return err
		}
	} else if len(reps) > 1 {
		printSummary(stdout, doc)
	}
	if doc.Score.CasesPassed < doc.Score.CasesTotal {
		return errFailed
	}
	return nil
}
