// Command worker runs one case's story, or one of its checks, against one
// implementation of the case. The lab's command builds it with the
// implementation linked in by a generated file (see package grade) and runs
// it as a child process, so that a panic, a fatal error, a deadlock or a
// data race in student code never reaches the process that prints the
// report. Built without that file it has nothing to run.
//
//	worker run [flags of the case's story]
//	worker check -id ID -out FILE
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"stampede/checker/check"
	"stampede/checker/harness"
)

// bound is set by the generated file: the case bound to the implementation,
// and the implementation's import path.
var (
	bound harness.Bound
	pkg   string
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		os.Exit(2)
	}
}

func run(args []string) error {
	if bound.Checks == nil {
		return errors.New("built without an implementation; the lab's command builds it for you")
	}
	if len(args) == 0 {
		return errors.New("usage: worker run [flags] | worker check -id ID -out FILE")
	}
	ctx := context.Background()
	switch args[0] {
	case "run":
		return story(ctx, args[1:])
	case "check":
		fs := flag.NewFlagSet("check", flag.ContinueOnError)
		id := fs.String("id", "", "the check to run")
		out := fs.String("out", "", "the file to write the verdict to, as JSON")
		hang := fs.Duration("bound", harness.DefaultBound, "how long code may run without settling")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		fn, ok := bound.Checks[*id]
		if !ok {
			return fmt.Errorf("no check %q", *id)
		}
		v := fn(harness.New(ctx, pkg, *hang))
		return writeVerdict(*out, v)
	}
	return fmt.Errorf("unknown mode %q", args[0])
}

// writeVerdict writes v to the file at path. The verdict goes to a file,
// not to standard output, so that whatever the student's code prints
// cannot garble it.
func writeVerdict(path string, v check.Verdict) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

// storyLimit is how long a story may run before the worker calls it stuck.
// Stories take seconds; a deadlock is found at once, not at this limit.
const storyLimit = time.Minute

// story plays the case's story while a watchdog looks for student code
// that deadlocks or never stops, and turns flag mistakes into one line.
func story(ctx context.Context, args []string) error {
	h := harness.New(ctx, pkg, harness.DefaultBound)
	done := make(chan struct{})
	var err error
	go func() {
		defer close(done)
		err = bound.Scenario(ctx, os.Stdout, args)
	}()
	if stuck := h.Watch(done, storyLimit); stuck != nil {
		fmt.Fprintln(os.Stderr, check.StoryStuck+stuck.Error())
		os.Exit(3)
	}
	var fe *harness.FlagError
	switch {
	case errors.Is(err, harness.ErrHelpShown):
		return nil
	case errors.As(err, &fe):
		fmt.Fprintln(os.Stderr, check.StoryUsage+fe.Error())
		os.Exit(2)
	}
	return err
}
