package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"stampede/checker"
	"stampede/checker/check"
	"stampede/checker/grade"
)

// compilerAdvice is the one line on getting the race detector, which needs
// cgo and a C compiler.
const compilerAdvice = "The race detector needs cgo and a C compiler. " +
	"Linux: install gcc (sudo apt install gcc, or your distribution's gcc). " +
	"macOS: xcode-select --install. " +
	"Windows: put MinGW-w64's gcc on your PATH (from winlibs.com or MSYS2). " +
	"Then turn cgo on: go env -w CGO_ENABLED=1 (and no CGO_ENABLED=0 in your environment)."

// noRaceAdvice is what --no-race says: it is for speed while working, and
// it cannot pass a case.
const noRaceAdvice = "--no-race: quicker while you work, but the race check does not run, " +
	"so no case counts as passed; check again without --no-race for the verdict."

// prepare compiles, once, everything the workers of cases will link except
// the implementations themselves: the checker, the harness, Redis for case
// 6, and (with race) Go's race-enabled runtime. The grader would compile
// them anyway on its first build, but silently; here `go build -v` names
// each package as it is compiled, so a cold start says what it is doing.
// A warm one costs a look at the lab's files: once the stamp (stamp.go)
// says that nothing changed since go build last compiled them, go build is
// not asked again.
//
// With race on a machine that cannot build with the race detector,
// prepare says so on p and returns why, and compiles without it.
func prepare(ctx context.Context, root string, race bool, cases []check.Case, p *progress) (noRace string, err error) {
	pkgs := []string{"./checker/worker"}
	for _, c := range cases {
		pkgs = append(pkgs, "./checker/"+c.Dir())
	}
	if compiledAlready(ctx, root, race, pkgs) {
		return "", nil
	}
	what := "compiling the lab with the race detector (first time only, about a minute on 2 cores)"
	if !race {
		what = "compiling the lab without the race detector (first time only)"
	}
	out, err := compileWithProgress(ctx, root, race, pkgs, what, p)
	if err == nil && ctx.Err() == nil {
		writeStamp(ctx, root, race, pkgs)
	}
	if err == nil || ctx.Err() != nil {
		return "", ctx.Err()
	}
	if race && raceUnavailable(out) {
		// Why, in the toolchain's terms: CGO_ENABLED=0 is a setting, not
		// the machine's fault.
		noRace = grade.RaceUnavailable(ctx)
		if noRace == "" {
			noRace = "the race detector cannot be built here"
		}
		p.Line("No race detector: %s. %s", noRace, compilerAdvice)
		_, _ = compileWithProgress(ctx, root, false, pkgs,
			"compiling the lab without the race detector (first time only)", p)
		return noRace, ctx.Err()
	}
	// Anything else is the grader's to report, with the student's lines.
	return "", ctx.Err()
}

// compileWithProgress runs go build -v on pkgs and reports on p as
// packages are compiled. It returns what go build printed.
func compileWithProgress(ctx context.Context, root string, race bool, pkgs []string, what string, p *progress) ([]byte, error) {
	args := []string{"build", "-trimpath", "-v"}
	if race {
		args = append(args, "-race")
	}
	// The compiler's scratch files go in a folder of our own, removed at
	// the end however the build ends.
	scratch, err := os.MkdirTemp("", "stampede-setup-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(scratch)
	cmd := exec.CommandContext(ctx, "go", append(args, pkgs...)...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOTMPDIR="+scratch)
	// Stopped (Ctrl-C, SIGTERM), go build is asked to stop, so that it
	// ends its compilers and removes its work folder; killed only if it
	// does not.
	cmd.Cancel = func() error {
		if err := cmd.Process.Signal(os.Interrupt); err != nil {
			return cmd.Process.Kill()
		}
		return nil
	}
	cmd.WaitDelay = 10 * time.Second
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("running go build: %w", err)
	}
	var all bytes.Buffer
	start := time.Now()
	var (
		mu       sync.Mutex
		compiled int
		last     string // the package named last
		waited   bool   // a line said go build was at work before it named one
	)
	// One package (Redis's client, with the race detector, on a busy
	// machine) can take minutes, and go build names a package only once it
	// is done, or, on a loaded machine, may take a while to find that
	// nothing needs compiling: a ticker says that the build goes on, every
	// second on a terminal (after a few quiet ones) and every half minute
	// in a log.
	stop := make(chan struct{})
	ticked := make(chan struct{})
	go func() {
		defer close(ticked)
		every := 30 * time.Second
		if p.tty {
			every = time.Second
		}
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case now := <-t.C:
				mu.Lock()
				n, pkg := compiled, last
				if n == 0 && !p.tty {
					waited = true
				}
				mu.Unlock()
				switch {
				case n == 0 && now.Sub(start) < quietCompile:
				case n == 0 && p.tty:
					p.Status("  go build is at work (%s): finding what needs compiling", since(start))
				case n == 0:
					p.Line("  go build is at work (%s): finding what needs compiling", since(start))
				case p.tty:
					p.Status("  %s compiled (%s): %s", plural(n, "package"), since(start), pkg)
				default:
					p.Line("  still compiling: %s so far (%s)", plural(n, "package"), since(start))
				}
			}
		}
	}()
	sc := bufio.NewScanner(io.TeeReader(stderr, &all))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.ContainsAny(line, " :") {
			continue // an error line, not a package being compiled
		}
		mu.Lock()
		compiled++
		n := compiled
		last = line
		mu.Unlock()
		if n == 1 {
			p.Line("%s", what)
		}
		if n%25 == 0 && !p.tty {
			p.Line("  %s compiled (%s)", plural(n, "package"), since(start))
		}
		p.Status("  %s compiled (%s): %s", plural(n, "package"), since(start), line)
	}
	_, _ = io.Copy(io.Discard, stderr)
	err = cmd.Wait()
	close(stop)
	<-ticked
	switch {
	case compiled > 0:
		p.Line("  compiled %s in %s", plural(compiled, "package"), since(start))
	case waited:
		p.Line("  nothing needed compiling (%s)", since(start))
	default:
		p.Clear()
	}
	return all.Bytes(), err
}

// quietCompile is how long a build may go on, on a terminal, before it
// says it is at work though go build has not named a package yet: a warm
// build (everything cached) mostly ends within it.
const quietCompile = 3 * time.Second

// plural is n things: "1 package", "85 packages".
func plural(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}

// since is the time since start, to the second.
func since(start time.Time) string { return time.Since(start).Round(time.Second).String() }

// raceUnavailable recognises go build's ways of saying it cannot build
// with the race detector here.
func raceUnavailable(out []byte) bool {
	s := string(out)
	return strings.Contains(s, "-race requires cgo") ||
		strings.Contains(s, "C compiler") && strings.Contains(s, "not found") ||
		strings.Contains(s, "-race is not supported")
}

// setupCmd compiles everything the lab will need, once, with progress: the
// first hour of a class goes to the cases, not to waiting on the compiler.
func setupCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("setup", flag.ContinueOnError)
	rest, err := parse(fs, args, false)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usagef("setup takes no arguments")
	}
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	start := time.Now()
	p := newProgress(stderr)
	noRace, err := prepare(ctx, root, true, checker.Cases(), p)
	if err != nil {
		return err
	}
	if noRace != "" {
		yellow.Fprintf(stdout, "Set up without the race detector (%s). You can work on every case, but checks here cannot pass one.\n", noRace)
		return errIncomplete
	}
	fmt.Fprintf(stdout, "The lab is compiled (%s). A check now takes a few seconds: go run ./shop check 1\n", setupTook(goRunStart, start, time.Now()))
	return nil
}

// setupTook says how long setup took: from when `go run` began, when
// goRun can say (goRunStart), since go run compiles this command first,
// silently; else from when the command began, saying so.
func setupTook(goRun func() (time.Time, bool), start, end time.Time) string {
	if began, ok := goRun(); ok && !began.After(start) && start.Sub(began) < time.Hour {
		return fmt.Sprintf("%s in all: %s for go run to compile the command, %s for the rest",
			round(end.Sub(began)), round(start.Sub(began)), round(end.Sub(start)))
	}
	return fmt.Sprintf("in %s, after go run compiled the command", round(end.Sub(start)))
}
