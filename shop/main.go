// Command shop is the stampede lab: it plays each case's story with real
// numbers and grades a student's fix.
//
//	go run ./shop setup      compile everything once, with progress
//	go run ./shop list       the cases, and which are solved
//	go run ./shop run N      play case N's story on the code in cases/
//	go run ./shop check N    grade cases/caseNN (--solution: solutions/caseNN)
//	go run ./shop watch      check again on every save
//	go run ./shop hint N     one more hint each time
//	go run ./shop diff N     cases/caseNN against solutions/caseNN
//	go run ./shop grade DIR  grade many students' clones into one class summary
//	go run ./shop compare    every technique on one workload, side by side
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

	"stampede/checker"
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
	exitPass       = 0 // everything asked for passed
	exitFail       = 1 // a check failed, or a story could not be played
	exitUsage      = 2 // the command line was wrong
	exitIncomplete = 3 // nothing failed, but the race check could not run here
	exitStop       = 130
)

// usageError is a mistake on the command line: one line, exit status 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// usageText is the help, for the lab's cases: the lists of cases that
// take a flag are written from the registry.
const usageText = `usage: go run ./shop <command> [arguments]

commands:
  setup                  compile the lab once, with progress (a minute or two, first time only)
  list                   every case, and whether you have solved it
  run N                  play case N's story on your code, with real numbers
      --solution         ... on the reference solution instead
      --timeline         ... and draw each visitor's wait (cases {{lanes}}); with --seed S,
                         every event of the explorer's scene S (cases {{scenes}})
      --cases DIR        ... on DIR's cases/ (another clone)
      --redis URL        the Redis cases ({{redis}}): ... on a real Redis or Valkey server
                         (redis://HOST:PORT/DB; $REDIS_URL does the same); a note elsewhere
      -h                 the story's own flags
  check N | all          grade cases/caseNN (or every case)
      --solution         grade the reference solution instead
      --cases DIR        grade DIR's cases/ (another clone) with this lab's checker
      --repeat K         run each check that varies K times, the others K/3 (default 3)
      --json             one JSON document, for autograders
      --verbose          whole race reports and crashes
      --redis URL        the Redis cases ({{redis}}): check on a real Redis or Valkey server
                         ($REDIS_URL does the same); a note elsewhere
      --no-race          quicker while you work, but no case counts as passed without the race check
      --seed S           replay the random scenes of seed S
  watch [N]              check again each time you save; move on when it passes
      --stay             ... but stay on case N (for the exercises)
  hint N                 one more hint each time you ask
      --all              every hint at once
      --reset            forget the hints seen, and start again
  diff N                 your case against the reference solution
  compare                every technique on one workload (10,000 reads/s, 100 servers), side by side
      --servers N        ... over N app servers (default 100)
      --rate R           ... R reads a second, all servers together (default 10000)
      --rebuild D        ... a source query of D (default 200ms)
      --student          ... and a row for each case of the table you changed in cases/
  reset N                put case N back as shipped (your changed files are kept in .lab-backup/)
  grade DIR...           grade each student's clone with this lab's checker: a table, CSV and JSON
      --only N,M         grade only these cases
      --jobs N, -j N     grade N cases at once (default: one per processor, as free memory allows)
      --csv FILE         where to write the CSV (default grades.csv, in the lab's folder)
      --json FILE        where to write the JSON (default grades.json, in the lab's folder)
      --repeat K         run each check that varies K times, the others K/3 (default 3)

Exit status: 0 all passed, 1 something failed, 2 a wrong command line,
3 nothing failed but the race check could not run here (not graded).

Start with: go run ./shop setup, then go run ./shop check 1`

// run carries out one command line and returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	err := dispatch(ctx, args, stdout, stderr)
	var ue usageError
	switch {
	case ctx.Err() != nil:
		fmt.Fprintln(stderr, "shop: interrupted; the checks were stopped and nothing was reported")
		return exitStop
	case err == nil:
		return exitPass
	case errors.Is(err, errFailed):
		return exitFail
	case errors.Is(err, errIncomplete):
		return exitIncomplete
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

// errIncomplete means nothing failed, but a case could not be graded in
// full here (no race detector), so it is not passed either.
var errIncomplete = errors.New("not graded here")

// dispatch runs one command. Reports go to stdout; progress on slow steps
// goes to stderr, so that `check all --json > report.json` stays one
// document.
func dispatch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprintln(stdout, usage(checker.Cases()))
		return usagef("no command given")
	}
	if help, ok := commandHelp(args); ok {
		fmt.Fprint(stdout, help)
		return nil
	}
	switch cmd, rest := args[0], args[1:]; cmd {
	case "setup":
		return setupCmd(ctx, rest, stdout, stderr)
	case "list":
		return listCmd(ctx, rest, stdout, stderr)
	case "run":
		return runCmd(ctx, rest, stdout, stderr)
	case "check":
		return checkCmd(ctx, rest, stdout, stderr)
	case "grade":
		return gradeCmd(ctx, rest, stdout, stderr)
	case "hint":
		return hintCmd(ctx, rest, stdout)
	case "diff":
		return diffCmd(ctx, rest, stdout, stderr)
	case "compare":
		return compareCmd(ctx, rest, stdout, stderr)
	case "watch":
		return watchCmd(ctx, rest, stdout, stderr)
	case "reset":
		return resetCmd(ctx, rest, stdout)
	case "help", "-h", "-help", "--help":
		fmt.Fprintln(stdout, usage(checker.Cases()))
		return nil
	default:
		if s := suggest(cmd, commands); s != "" {
			return usagef("unknown command %q (did you mean %s?)", cmd, s)
		}
		return usagef("unknown command %q (try: go run ./shop help)", cmd)
	}
}
