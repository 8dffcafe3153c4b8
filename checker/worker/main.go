// Command worker runs one case's story, or one of its checks, against one
// implementation of the case. The lab's command builds it with the
// implementation linked in by a generated file (see package grade) and runs
// it as a child process, so that a panic, a fatal error, a deadlock or a
// data race in student code never reaches the process that prints the
// report. Built without that file it has nothing to run.
//
//	worker run [flags of the case's story]
//	worker check [-impl PKG] -id ID [-bound D] [-seed S] [-part K -parts N]
//
// A worker may be built with several implementations of one case linked in
// (the library grades all of a case's entries with one program); -impl then
// names the one a check runs, and only that one's code is called.
//
// A check's verdict goes to standard output as one line that starts with
// the key the grader put in STAMPEDE_VERDICT_KEY. The worker takes the key
// out of its environment and standard output out of reach of the code it
// checks before any check runs: what the student's code prints goes to the
// null device, and it cannot sign a line without the key.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"sync"
	"time"

	"stampede/checker/check"
	"stampede/checker/harness"
)

// impls is set by the generated file: the case bound to each
// implementation linked in, by the implementation's import path.
var impls map[string]harness.Bound

func main() {
	key := os.Getenv(verdictKey)
	os.Unsetenv(verdictKey)
	verdicts := os.Stdout
	if len(os.Args) > 1 && os.Args[1] == "check" {
		devNull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
		if err != nil {
			fmt.Fprintln(os.Stderr, "worker:", err)
			os.Exit(2)
		}
		os.Stdout = devNull
	}
	if err := run(os.Args[1:], &sink{w: verdicts, key: key}); err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		os.Exit(2)
	}
}

// verdictKey names the environment variable that holds the verdict's key.
const verdictKey = "STAMPEDE_VERDICT_KEY"

// sink is where the verdict goes: one keyed line on the real standard
// output.
type sink struct {
	mu      sync.Mutex
	w       *os.File
	key     string
	written bool
}

// write writes v as the verdict. The first verdict written is the one that
// counts: the goroutine watchdog may write one while a check is running.
func (s *sink) write(v check.Verdict) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.written:
		return nil
	case s.key == "":
		return errors.New("no verdict key: the lab's command runs the checks for you")
	}
	s.written = true
	line := append([]byte("\n"+s.key+" "), data...)
	_, err = s.w.Write(append(line, '\n'))
	return err
}

func run(args []string, out *sink) error {
	if len(impls) == 0 {
		return errors.New("built without an implementation; the lab's command builds it for you")
	}
	if len(args) == 0 {
		return errors.New("usage: worker run [flags] | worker check [-impl PKG] -id ID [-bound D] [-seed S] [-part K -parts N]")
	}
	ctx := context.Background()
	switch args[0] {
	case "run":
		pkg, bound, err := pick("")
		if err != nil {
			return err
		}
		return story(ctx, pkg, bound, args[1:])
	case "check":
		fs := flag.NewFlagSet("check", flag.ContinueOnError)
		impl := fs.String("impl", "", "the implementation to check, when more than one is linked in")
		id := fs.String("id", "", "the check to run")
		hang := fs.Duration("bound", harness.DefaultBound, "how long code may run without settling")
		seed := fs.Uint64("seed", 0, "the seed of the check's random scenes (0: the check picks one)")
		part := fs.Int("part", 0, "the part of the check to play, from 0 (check.Info.Parts)")
		parts := fs.Int("parts", 1, "how many parts the check is played in")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		pkg, bound, err := pick(*impl)
		if err != nil {
			return err
		}
		fn, ok := bound.Checks[*id]
		if !ok {
			return fmt.Errorf("no check %q", *id)
		}
		h := harness.New(ctx, pkg, *hang)
		h.SetSeed(*seed)
		h.SetPart(*part, *parts)
		return out.write(fn(h))
	}
	return fmt.Errorf("unknown mode %q", args[0])
}

// pick returns the implementation named impl, or the only one linked in
// when impl is empty.
func pick(impl string) (string, harness.Bound, error) {
	if impl == "" {
		if len(impls) != 1 {
			return "", harness.Bound{}, fmt.Errorf("%d implementations are linked in: name one with -impl", len(impls))
		}
		for pkg, b := range impls {
			return pkg, b, nil
		}
	}
	b, ok := impls[impl]
	if !ok {
		return "", harness.Bound{}, fmt.Errorf("no implementation %q is linked in", impl)
	}
	return impl, b, nil
}

// A story that is still running once it has used storyCPU of CPU time, or
// storyWall on the clock, is stuck. Stories take seconds, up to 13 s of CPU
// time with the race detector (case 8's), and a deadlock is
// found at once, not at these limits. The clock's limit is for code
// asleep on real timers; it is not what stops a slow story on a loaded
// machine (CI saw case 9's take more than a minute on the clock).
const (
	storyCPU  = time.Minute
	storyWall = 4 * time.Minute
)

// story plays the case's story while a watchdog looks for student code
// that deadlocks or never stops, and turns flag mistakes into one line.
func story(ctx context.Context, pkg string, bound harness.Bound, args []string) error {
	h := harness.New(ctx, pkg, harness.DefaultBound)
	done := make(chan struct{})
	var err error
	go func() {
		defer close(done)
		err = bound.Scenario(ctx, os.Stdout, args)
	}()
	if stuck := h.Watch(done, storyCPU, storyWall); stuck != nil {
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
