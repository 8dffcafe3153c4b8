// Command shop is the stampede lab: it plays each case's story with real
// numbers and grades a student's fix.
//
//	go run ./shop list       the cases, and which are solved
//	go run ./shop run N      play case N's story on the code in cases/
//	go run ./shop check N    grade cases/caseNN (--solution: solutions/caseNN)
//	go run ./shop watch      check again on every save
//	go run ./shop hint N     one more hint each time
//	go run ./shop diff N     cases/caseNN against solutions/caseNN
//
// The command never imports student code: each case is built into a worker
// program of its own and run in child processes (see checker/grade), so a
// case that crashes, hangs or does not compile cannot take the command, or
// any other case, down with it.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	// Ctrl-C, and the SIGTERM that `timeout` or a cancelled CI job sends,
	// cancel the context: every child process is killed with its process
	// group, the temporary folders are removed, and no report is printed.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// Exit codes.
const (
	exitPass  = 0 // everything asked for passed
	exitFail  = 1 // a check failed, or a story could not be played
	exitUsage = 2 // the command line was wrong
	exitStop  = 130
)

// usageError is a mistake on the command line: one line, exit status 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

const usage = `usage: go run ./shop <command> [arguments]

commands:
  list                   every case, and whether you have solved it
  run N                  play case N's story on your code, with real numbers
      --solution         ... on the reference solution instead
      --timeline         ... and draw each visitor's wait
      -h                 the story's own flags
  check N | all          grade cases/caseNN (or every case)
      --solution         grade the reference solution instead
      --repeat K         run each check K times (default 3)
      --json             one JSON document, for autograders
      --verbose          whole race reports and crashes
      --seed S           replay the random scenes of seed S
  watch [N]              check again each time you save; move on when it passes
      --stay             ... but stay on case N (for the exercises)
  hint N                 one more hint each time you ask (--all: every hint)
  diff N                 your case against the reference solution
  reset N                put case N back as shipped (your files are kept in .lab-backup/)

Start with: go run ./shop check 1`

// run carries out one command line and returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	err := dispatch(ctx, args, stdout)
	var ue usageError
	switch {
	case ctx.Err() != nil:
		fmt.Fprintln(stderr, "shop: interrupted; the checks were stopped and nothing was reported")
		return exitStop
	case err == nil:
		return exitPass
	case errors.Is(err, errFailed):
		return exitFail
	case errors.As(err, &ue):
		fmt.Fprintln(stderr, "shop:", ue.msg)
		return exitUsage
	default:
		fmt.Fprintln(stderr, "shop:", err)
		return exitFail
	}
}

// errFailed means the command ran and reported a failure on stdout.
var errFailed = errors.New("failed")

func dispatch(ctx context.Context, args []string, stdout io.Writer) error {
	if len(args) == 0 {
		fmt.Fprintln(stdout, usage)
		return usagef("no command given")
	}
	switch cmd, rest := args[0], args[1:]; cmd {
	case "list":
		return listCmd(ctx, rest, stdout)
	case "run":
		return runCmd(ctx, rest, stdout)
	case "check":
		return checkCmd(ctx, rest, stdout)
	case "hint":
		return hintCmd(ctx, rest, stdout)
	case "diff":
		return diffCmd(ctx, rest, stdout)
	case "watch":
		return watchCmd(ctx, rest, stdout)
	case "reset":
		return resetCmd(ctx, rest, stdout)
	case "help", "-h", "-help", "--help":
		fmt.Fprintln(stdout, usage)
		return nil
	default:
		return usagef("unknown command %q (try: go run ./shop help)", cmd)
	}
}
