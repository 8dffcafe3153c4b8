package grade

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"stampede/checker/check"
	"stampede/checker/stack"
)

// Limits bound a child process.
type Limits struct {
	// Hang is how long the worker lets code run without settling before it
	// calls it stuck and says where (harness.DefaultBound when zero).
	Hang time.Duration
	// Kill is how long a child may live at all; past it, it is killed. It
	// only matters when the worker itself cannot stop the student's code.
	Kill time.Duration
}

func (l Limits) orDefault() Limits {
	if l.Hang == 0 {
		l.Hang = 5 * time.Second
	}
	if l.Kill == 0 {
		l.Kill = 6*l.Hang + 10*time.Second
	}
	return l
}

// Run is what one child process of a check did.
type Run struct {
	Verdict check.Verdict
	Races   []stack.Race
	Stderr  string // everything the child wrote to standard error
	Crashed bool   // the child died or was killed before it gave a verdict
}

// Check runs one check in a child process of its own and returns its
// verdict. A child that crashes or has to be killed gets a failing verdict
// that says what happened and where in the student's code.
func (w *Worker) Check(ctx context.Context, id string, lim Limits) Run {
	lim = lim.orDefault()
	out := filepath.Join(w.tmp, fmt.Sprintf("verdict-%s-%d.json", id, time.Now().UnixNano()))
	defer os.Remove(out)

	ctx, cancel := context.WithTimeout(ctx, lim.Kill)
	defer cancel()
	var stderr headTail
	cmd := exec.CommandContext(ctx, w.bin, "check", "-id", id, "-out", out, "-bound", lim.Hang.String())
	cmd.Dir = w.root
	cmd.Stdout = nil // the null device: what the student's code prints is not the verdict
	cmd.Stderr = &stderr
	cmd.Env = childEnv()
	cmd.WaitDelay = time.Second
	err := cmd.Run()

	r := Run{Stderr: stderr.String()}
	r.Races = stack.Races(r.Stderr, w.Target.Pkg)
	if data, rerr := os.ReadFile(out); rerr == nil {
		if jerr := json.Unmarshal(data, &r.Verdict); jerr == nil {
			return r
		}
	}
	r.Crashed = true
	switch {
	case ctx.Err() == context.DeadlineExceeded:
		r.Verdict = check.Failed("", fmt.Sprintf("stopped after %v: the code never finished and never settled", lim.Kill))
		r.Verdict.Hung = true
	case ctx.Err() != nil:
		r.Verdict = check.Failed("", "interrupted")
	default:
		r.Verdict = check.Failed("", crashMessage(r.Stderr, w.Target.Pkg, err, "the check"))
	}
	return r
}

// childEnv is the environment of a child: the race detector reports every
// race, exits with status 66 if it saw one, and does not pause at exit; a
// crash prints every goroutine.
func childEnv() []string {
	return append(os.Environ(),
		"GORACE=exitcode=66 atexit_sleep_ms=0 history_size=3",
		"GOTRACEBACK=all",
	)
}

// crashMessage explains a child that died without a verdict.
func crashMessage(stderr, pkg string, err error, what string) string {
	lines := strings.Split(stderr, "\n")
	for i, line := range lines {
		what, ok := crashLine(line)
		if !ok {
			continue
		}
		where := ""
		for _, g := range stack.Parse(strings.Join(lines[i:], "\n")) {
			if f, ok := g.In(pkg); ok {
				where = " at " + stack.Where(f, check.Module)
				break
			}
		}
		return "the program crashed: " + what + where + crashHint(what)
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return fmt.Sprintf("the program exited with status %d before %s finished%s",
			exit.ExitCode(), what, lastLines(stderr))
	}
	return fmt.Sprintf("the check could not run: %v", err)
}

// crashLine recognises the first line of a crash.
func crashLine(line string) (string, bool) {
	for _, p := range []string{"fatal error: ", "panic: ", "runtime: goroutine stack exceeds"} {
		if strings.HasPrefix(line, p) {
			return strings.TrimSpace(line), true
		}
	}
	return "", false
}

// crashHint adds a line of advice for the crashes students meet most.
func crashHint(what string) string {
	switch {
	case strings.Contains(what, "concurrent map"):
		return " (two goroutines used one map at the same time: every read and write of a shared map must hold a lock, or use sync.Map)"
	case strings.Contains(what, "all goroutines are asleep"):
		return " (every goroutine is waiting for another: a lock taken twice, or a channel nobody sends on)"
	case strings.Contains(what, "stack exceeds"), strings.Contains(what, "stack overflow"):
		return " (a function calls itself without end)"
	case strings.Contains(what, "nil map"):
		return " (a map must be made with make before it is written)"
	case strings.Contains(what, "unlock of unlocked"):
		return " (a mutex was unlocked twice, or unlocked by a path that never locked it)"
	}
	return ""
}

func lastLines(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) == 0 || lines[0] == "" {
		return ""
	}
	if len(lines) > 3 {
		lines = lines[len(lines)-3:]
	}
	return ": " + strings.Join(lines, " / ")
}

// Play runs the case's story with the given flags, its output going to
// stdout. A story that crashes or hangs comes back as an error that says
// what happened in the student's code.
func (w *Worker) Play(ctx context.Context, args []string, stdout io.Writer, kill time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, kill)
	defer cancel()
	var stderr headTail
	cmd := exec.CommandContext(ctx, w.bin, append([]string{"run"}, args...)...)
	cmd.Dir = w.root
	cmd.Stdout = stdout
	cmd.Stderr = &stderr
	cmd.Env = childEnv()
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	out := stderr.String()
	races := stack.Races(out, w.Target.Pkg)
	switch {
	case ctx.Err() == context.DeadlineExceeded:
		return fmt.Errorf("the story did not finish within %v, and was stopped", kill)
	case ctx.Err() != nil:
		return errors.New("interrupted")
	case err == nil && len(races) == 0:
		return nil
	}
	for _, line := range strings.Split(out, "\n") {
		if msg, ok := strings.CutPrefix(line, check.StoryStuck); ok {
			return errors.New("the story stopped: " + msg)
		}
		if msg, ok := strings.CutPrefix(line, check.StoryUsage); ok {
			return &UsageError{Msg: msg}
		}
	}
	if len(races) > 0 && !strings.Contains(out, "fatal error") && !strings.Contains(out, "panic: ") {
		return &RaceError{Races: races}
	}
	return errors.New(crashMessage(out, w.Target.Pkg, err, "the story"))
}

// UsageError is a story given flags it does not take.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// RaceError is a story that ran to its end with data races.
type RaceError struct{ Races []stack.Race }

func (e *RaceError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "the race detector saw %d data race(s):", len(e.Races))
	for _, r := range e.Races {
		b.WriteString("\n  race: " + r.String(check.Module))
	}
	return b.String()
}

// headTail keeps the first and the last part of what a child writes to
// standard error: race reports come early, a crash's trace comes last, and
// a student's debug printing in between could otherwise fill memory.
type headTail struct {
	head, tail []byte
	dropped    int
}

const headTailKeep = 1 << 20

func (b *headTail) Write(p []byte) (int, error) {
	n := len(p)
	if room := headTailKeep - len(b.head); room > 0 {
		k := min(room, len(p))
		b.head = append(b.head, p[:k]...)
		p = p[k:]
	}
	b.tail = append(b.tail, p...)
	if over := len(b.tail) - headTailKeep; over > 0 {
		b.dropped += over
		b.tail = append(b.tail[:0], b.tail[over:]...)
	}
	return n, nil
}

func (b *headTail) String() string {
	if b.dropped == 0 {
		return string(b.head) + string(b.tail)
	}
	return fmt.Sprintf("%s\n[... %d bytes left out ...]\n%s", b.head, b.dropped, b.tail)
}
