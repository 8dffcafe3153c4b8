package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"stampede/checker/check"
	"stampede/checker/grade"
)

// storyKill is when `run` stops a story's process from outside: a last
// resort past the worker's own limits (see checker/worker), which stop a
// stuck story with a diagnosis of where it is stuck.
const storyKill = 5 * time.Minute

func runCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	solution := fs.Bool("solution", false, "play the story on the reference solution")
	cases := fs.String("cases", "", "play the story on this folder's cases/ (another clone)")
	rest, err := parse(fs, args, true)
	if err != nil {
		return err
	}
	if len(rest) < 1 {
		return usagef("run takes a case number, such as: go run ./shop run 1")
	}
	c, err := caseArg(rest[0])
	if err != nil {
		return err
	}
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	if *solution && *cases != "" {
		return usagef("--solution and --cases each say what to run: give one")
	}
	sub, err := resolveSubmission(root, *cases)
	if err != nil {
		return err
	}
	target := sub.target(c)
	if *solution {
		target = grade.Solution(c)
	}
	if _, err := prepare(ctx, root, true, []check.Case{c}, newProgress(stderr)); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Case %d: %s (running %s)\n\n", c.Number, c.Title, sub.show(target))
	w, err := grade.Build(ctx, root, target, true)
	var be *grade.BuildError
	if errors.As(err, &be) {
		red.Fprintf(stdout, "%s %s:\n", target.Dir(), be.Problem())
		for _, line := range be.Lines {
			fmt.Fprintf(stdout, "  %s\n", line)
		}
		return errFailed
	}
	if err != nil {
		return err
	}
	defer w.Close()
	if err := w.Play(ctx, rest[1:], stdout, storyKill); err != nil {
		var ue *grade.UsageError
		if errors.As(err, &ue) {
			return usagef("run %d: %s (its flags: go run ./shop run %d -h)", c.Number, ue.Msg, c.Number)
		}
		fmt.Fprintln(stdout)
		red.Fprintln(stdout, err)
		return errFailed
	}
	return nil
}
