package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
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
	// --timeline and --redis are the story's, but offered for every case:
	// the command makes sure they mean the same in each.
	timeline := fs.Bool("timeline", false, "draw what happened, visitor by visitor")
	redis := fs.String("redis", "", "a real Redis or Valkey server, for the cases on Redis")
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
	story := rest[1:]
	if *timeline {
		if story, err = timelineArgs(c, story); err != nil {
			return err
		}
	}
	url, note, err := redisServer(ctx, []check.Case{c}, *redis)
	if err != nil {
		return err
	}
	if note != "" {
		fmt.Fprintln(stderr, note)
	}
	if url != "" {
		story = append(story, "--redis", url)
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
	if err := w.Play(ctx, story, stdout, storyKill); err != nil {
		var ue *grade.UsageError
		if errors.As(err, &ue) {
			return usagef("run %d: %s%s", c.Number, ue.Msg, storyHint(ctx, w, c, ue.Msg, fs))
		}
		fmt.Fprintln(stdout)
		red.Fprintln(stdout, err)
		return errFailed
	}
	return nil
}

// storyHint ends the line of a story that refused its flags: a suggestion
// when the flag is a typo of one the story or the command takes, or else
// where to find the story's flags.
func storyHint(ctx context.Context, w *grade.Worker, c check.Case, msg string, own *flag.FlagSet) string {
	help := fmt.Sprintf(" (its flags: go run ./shop run %d -h)", c.Number)
	name, ok := strings.CutPrefix(msg, "flag provided but not defined: -")
	if !ok {
		return help
	}
	var out bytes.Buffer
	if err := w.Play(ctx, []string{"-h"}, &out, time.Minute); err != nil {
		return help
	}
	names := flagNames(own)
	for _, line := range strings.Split(out.String(), "\n") {
		if f, ok := strings.CutPrefix(strings.TrimSpace(line), "-"); ok && f != "" {
			names = append(names, strings.Fields(f)[0])
		}
	}
	if s := didYouMean(name, names, "--"); s != "" {
		return s
	}
	return help
}
