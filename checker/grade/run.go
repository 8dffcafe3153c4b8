package grade

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
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
	// When zero: six hang bounds and 10 s, and scenesKill times that for
	// a check that plays many scenes.
	Kill time.Duration
	// Memory is how much resident memory a child may use before it is
	// stopped (1 GiB when zero). It is watched where the system says
	// (Linux); elsewhere only the kill bound applies.
	Memory int64
}

// scenesKill is how many kill bounds a check that plays many scenes
// (check.Info.Scenes) gets. make test saw case 5's switches check, 494
// plays of small scenes, pass a right answer in about 3 s alone and
// outlive the 40 s bound with both cores busy twice over.
const scenesKill = 3

// DefaultMemory is the resident memory a check may use: the checks need a
// few hundred megabytes with the race detector's shadow memory, and a
// two-core classroom laptop must survive two runaway children at once.
const DefaultMemory = 1 << 30

func (l Limits) orDefault() Limits {
	if l.Hang == 0 {
		l.Hang = 5 * time.Second
	}
	if l.Kill == 0 {
		l.Kill = 6*l.Hang + 10*time.Second
	}
	if l.Memory == 0 {
		l.Memory = DefaultMemory
	}
	return l
}

// Run is what one child process of a check did.
type Run struct {
	Verdict check.Verdict
	Races   []stack.Race
	// HiddenRace is set when the race detector ended the child with its
	// exit status but no report of it reached the grader.
	HiddenRace bool
	Stderr     string // everything the child wrote to standard error
	Crashed    bool   // the child died or was killed before it gave a verdict
	// NotRun says why the run was never started (another check had found
	// code that never stops); such a run is no evidence either way.
	NotRun string
}

// run runs one check once: in one child, or, for a check marked Apart, in
// two children started alike at the same time, whose drawn values must
// differ (see apart).
func (w *Worker) run(ctx context.Context, in check.Info, opts Options) Run {
	if in.Scenes && opts.Limits.Kill == 0 {
		// An explorer plays hundreds of scenes, each under the hang
		// bound, in one child: on a loaded machine it may take many
		// times what one scene takes. The kill bound is only the net for
		// code the worker cannot stop (a loop is found by the hang
		// bound, in seconds), so a run of scenes gets three of them.
		opts.Limits = opts.Limits.orDefault()
		opts.Limits.Kill *= scenesKill
	}
	if in.Apart == nil {
		return w.Check(ctx, in.ID, opts)
	}
	var pair [2]Run
	var wg sync.WaitGroup
	for i := range pair {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pair[i] = w.Check(ctx, in.ID, opts)
		}()
	}
	wg.Wait()
	return apart(in.Apart, pair)
}

// apart folds the runs of two processes started alike into one: the first
// failure if either failed, and otherwise a failure when both drew one
// same value, which every server of a real fleet would draw too.
func apart(a *check.Apart, pair [2]Run) Run {
	r := pair[0]
	r.Races = append(slices.Clone(r.Races), pair[1].Races...)
	r.HiddenRace = r.HiddenRace || pair[1].HiddenRace
	if !pair[0].Verdict.Pass || !pair[1].Verdict.Pass {
		if pair[0].Verdict.Pass {
			r.Verdict, r.Stderr, r.Crashed = pair[1].Verdict, pair[1].Stderr, pair[1].Crashed
		}
		return r
	}
	harm := a.Harm
	if harm == "" {
		harm = "one holder cannot be told from another"
	}
	a0, a1 := pair[0].Verdict.Drawn, pair[1].Verdict.Drawn
	var common []string
	for _, v := range a0 {
		if slices.Contains(a1, v) {
			common = append(common, v)
		}
	}
	if a.Share <= 0 {
		if len(common) > 0 {
			r.Verdict = check.Failed("same "+a.What, fmt.Sprintf(
				"two processes started alike, as two servers of a fleet are, both drew the %s %q: "+
					"in a real fleet every server draws the same ones, so %s "+
					"(a generator with a fixed seed, or a counter in memory, repeats in every process); %s",
				a.What, common[0], harm, a.Fix))
			return r
		}
		r.Verdict.Figure = strings.TrimPrefix(r.Verdict.Figure+"; two processes, no "+a.What+" in common", "; ")
		return r
	}
	least := min(len(a0), len(a1))
	if len(common) > 0 && float64(len(common)) >= a.Share*float64(least) {
		r.Verdict = check.Failed(fmt.Sprintf("%d of %d %ss the same", len(common), least, a.What), fmt.Sprintf(
			"two processes started alike, as two servers of a fleet are, drew %d of the same %d %ss (%s, ...): "+
				"in a real fleet every server draws nearly the same ones, so %s "+
				"(a generator with a fixed seed repeats in every process); %s",
			len(common), least, a.What, common[0], harm, a.Fix))
		return r
	}
	r.Verdict.Figure = strings.TrimPrefix(fmt.Sprintf("%s; two processes, %d of %d %ss in common",
		r.Verdict.Figure, len(common), least, a.What), "; ")
	return r
}

// raceExit is the status the race detector exits with when it saw a race
// (set through GORACE in childEnv).
const raceExit = 66

// verdictKey is the environment variable that hands a child the key it
// signs its verdict with. The worker reads and removes it before any check
// runs; student code, which cannot import os or syscall, cannot read it.
const verdictKey = "STAMPEDE_VERDICT_KEY"

// Check runs one check in a child process of its own and returns its
// verdict. A child that crashes or has to be killed gets a failing verdict
// that says what happened and where in the student's code.
//
// The verdict is believed only when it is the child's last word: a line on
// the child's standard output that starts with a fresh random key, from a
// child that then exited with status 0 (or the race detector's 66). See
// "The threat model" in docs/design.md.
func (w *Worker) Check(ctx context.Context, id string, opts Options) Run {
	lim := opts.Limits.orDefault()
	key := newKey()
	ctx, cancel := context.WithTimeout(ctx, lim.Kill)
	defer cancel()
	var stderr headTail
	verdict := &keyedLine{key: key + " "}
	args := []string{"check", "-id", id, "-bound", lim.Hang.String()}
	if w.impl != "" {
		args = append(args, "-impl", w.impl)
	}
	if opts.Seed != 0 {
		args = append(args, "-seed", strconv.FormatUint(opts.Seed, 10))
	}
	if opts.parts > 1 {
		args = append(args, "-part", strconv.Itoa(opts.part), "-parts", strconv.Itoa(opts.parts))
	}
	cmd := w.command(ctx, args...)
	cmd.Stdout = verdict
	cmd.Stderr = &stderr
	cmd.Env = childEnv(verdictKey+"="+key, fmt.Sprintf("GOMAXPROCS=%d", checkProcs))
	err, over := run(cmd, lim.Memory)

	r := Run{Stderr: stderr.String()}
	r.Races = stack.Races(r.Stderr, w.Target.Pkg)
	code := exitCode(err)
	r.HiddenRace = code == raceExit && len(r.Races) == 0
	if line, ok := verdict.last(); ok && ctx.Err() == nil && over == 0 && (err == nil || code == raceExit) {
		if jerr := json.Unmarshal([]byte(line), &r.Verdict); jerr == nil {
			return r
		}
	}
	r.Crashed = true
	switch {
	case over > 0:
		r.Verdict = check.Failed("", fmt.Sprintf("the code used more than %s of memory%s, and was stopped",
			size(over), w.where(r.Stderr)))
	case ctx.Err() == context.DeadlineExceeded:
		r.Verdict = check.Failed("", fmt.Sprintf("stopped after %v: the code never finished and never settled", lim.Kill))
		r.Verdict.Hung = true
	case ctx.Err() != nil:
		r.Verdict = check.Failed("", "interrupted")
	case err == nil:
		r.Verdict = check.Failed("", "the program ended (exit status 0) before the check gave its verdict: "+
			"something in the code ended it early")
	default:
		r.Verdict = check.Failed("", crashMessage(r.Stderr, w.Target.Pkg, err, "the check"))
	}
	return r
}

// command prepares a child: the worker binary in a process group of its
// own, so that whatever it starts is stopped with it.
func (w *Worker) command(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, w.prog.bin, args...)
	cmd.Dir = w.root
	setGroup(cmd)
	cmd.Cancel = func() error { return killGroup(cmd.Process) }
	// Once the child has exited, how long its output may take to drain.
	// One second was not enough at a load of 45: "exec: WaitDelay expired
	// before I/O complete" failed a check whose child had given its
	// verdict. Only a descendant holding the pipes open waits this long,
	// and killGroup ends it after.
	cmd.WaitDelay = 10 * time.Second
	return cmd
}

// run runs cmd to its end while watching its memory. Past limit it asks
// the child for its goroutines' stacks (so the diagnosis can say where the
// memory went), then kills its process group, and returns the limit it
// crossed. Whatever the child started is killed when it ends.
func run(cmd *exec.Cmd, limit int64) (err error, over int64) {
	if err := cmd.Start(); err != nil {
		return err, 0
	}
	done := make(chan struct{})
	var crossed atomic.Int64
	go func() {
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			if used, ok := residentMemory(cmd.Process.Pid); ok && used > limit {
				crossed.Store(limit)
				dumpStacks(cmd.Process)
				select {
				case <-done:
				case <-time.After(2 * time.Second):
				}
				killGroup(cmd.Process)
				return
			}
		}
	}()
	err = cmd.Wait()
	close(done)
	killGroup(cmd.Process) // anything the child left running
	return err, crossed.Load()
}

func exitCode(err error) int {
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode()
	}
	return 0
}

// where names the student's line in a child's dying stacks: the running
// goroutine's if it is in the student's code, else the first that is.
func (w *Worker) where(stderr string) string {
	var first string
	for _, g := range stack.Parse(stderr) {
		f, ok := g.In(w.Target.Pkg)
		if !ok {
			continue
		}
		at := " at " + stack.Where(f, check.Module)
		if !g.Blocked() {
			return at
		}
		if first == "" {
			first = at
		}
	}
	return first
}

func size(n int64) string {
	if n >= 1<<30 && n%(1<<30) == 0 {
		return fmt.Sprintf("%d GiB", n>>30)
	}
	return fmt.Sprintf("%d MiB", n>>20)
}

// newKey returns a fresh random key for one child's verdict.
func newKey() string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		panic(fmt.Sprintf("grade: no randomness for a verdict key: %v", err))
	}
	return hex.EncodeToString(b)
}

// keyedLine keeps the last line written to it that starts with key, and
// nothing else, however much else is written.
type keyedLine struct {
	key     string
	partial []byte // the line being written, while it may still be keyed
	skip    bool   // the line being written is not keyed
	found   string
	ok      bool
}

// maxVerdict is the longest verdict line kept.
const maxVerdict = 4 << 20

func (k *keyedLine) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		chunk := p
		if i >= 0 {
			chunk = p[:i]
		}
		if !k.skip {
			k.partial = append(k.partial, chunk...)
			if !bytes.HasPrefix(k.partial, []byte(k.key)) && !bytes.HasPrefix([]byte(k.key), k.partial) || len(k.partial) > maxVerdict {
				k.skip, k.partial = true, k.partial[:0]
			}
		}
		if i < 0 {
			break
		}
		if !k.skip && bytes.HasPrefix(k.partial, []byte(k.key)) {
			k.found, k.ok = string(k.partial[len(k.key):]), true
		}
		k.skip, k.partial = false, k.partial[:0]
		p = p[i+1:]
	}
	return n, nil
}

// last returns the last keyed line, without its key.
func (k *keyedLine) last() (string, bool) { return k.found, k.ok }

// childEnv is the environment of a child: the race detector reports every
// race, exits with status 66 if it saw one, and does not pause at exit; a
// crash prints every goroutine. set adds or replaces variables
// ("NAME=value").
func childEnv(set ...string) []string {
	set = append([]string{
		fmt.Sprintf("GORACE=exitcode=%d atexit_sleep_ms=0 history_size=3", raceExit),
		"GOTRACEBACK=all",
	}, set...)
	env := slices.Clone(set)
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if name != verdictKey && !slices.ContainsFunc(set, func(s string) bool { return strings.HasPrefix(s, name+"=") }) {
			env = append(env, kv)
		}
	}
	return env
}

// checkProcs is the GOMAXPROCS of a check's child: one processor each.
// The grader runs twice as many children as the machine has processors,
// and a check decides by what happens, never by how fast (gates, a
// virtual clock, schedules that let one goroutine go at a time), so a
// second processor in each child bought hand-overs between threads and
// little else: each wake-up of a parked goroutine woke another thread, and
// an idle processor spun looking for work. With one, `check N --solution`
// took 0.69 to 0.98 of the time it took with two (check 11: 4.7 s instead
// of 6.0; medians of 5, by turns, on two cores), and no verdict of the
// library changed. A check that needs goroutines on processors side by
// side asks for them itself (case 2's same-lock rounds, case 4's hammer).
const checkProcs = 1

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
		if exit.ExitCode() == raceExit {
			return fmt.Sprintf("the race detector stopped the program (exit status %d) before %s finished", raceExit, what)
		}
		return fmt.Sprintf("the program exited with status %d before %s finished (log.Fatal, or a call that ends the program)%s",
			exit.ExitCode(), what, lastLines(stderr))
	}
	return fmt.Sprintf("the check could not run: %v", err)
}

// crashLine recognises the first line of a crash.
func crashLine(line string) (string, bool) {
	if strings.Contains(line, "simultaneously alive goroutines is exceeded") {
		return "more than 8128 goroutines alive at once (the race detector's limit)", true
	}
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
	case strings.Contains(what, "goroutines alive at once"):
		return " (a goroutine per call that never ends, or a loop that starts goroutines without bound)"
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
	cmd := w.command(ctx, append([]string{"run"}, args...)...)
	cmd.Stdout = stdout
	cmd.Stderr = &stderr
	cmd.Env = childEnv()
	err, over := run(cmd, DefaultMemory)
	out := stderr.String()
	races := stack.Races(out, w.Target.Pkg)
	switch {
	case over > 0:
		return fmt.Errorf("the story used more than %s of memory%s, and was stopped", size(over), w.where(out))
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
