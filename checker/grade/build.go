// Package grade builds a case's worker around one implementation and runs
// its checks, each in a child process of its own, turning whatever happens
// there (a verdict, a crash, a hang, a data race, a compile error) into
// PASS and FAIL results.
//
// Why a worker program and not `go test -json`: student code must run in a
// process that is not the one printing the report (a fatal "concurrent map
// writes" cannot be recovered), the same binary must serve `shop run` and
// `shop check`, and one case that does not compile must not stop another.
// A per-implementation worker, linked by a generated file given to `go build
// -overlay`, gives all three: `shop` itself never imports student code, and
// the known-wrong library is graded by exactly the code that grades students.
package grade

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"stampede/checker/check"
	"stampede/checker/point"
)

// Target is one implementation of a case: the student's, the reference
// solution, or an entry of the known-wrong library.
type Target struct {
	Case check.Case
	Pkg  string // import path, such as "stampede/cases/case01"
	// Src is the folder that holds the implementation's files when they are
	// not in the lab's own folder for Pkg: another checkout's cases/case01,
	// graded with this checkout's checker. The build lays its Go files over
	// Pkg's folder. Empty means Pkg's folder below the module root.
	Src string
}

// Student returns the student's code for case c, in cases/.
func Student(c check.Case) Target { return Target{Case: c, Pkg: check.Module + "/cases/" + c.Dir()} }

// Solution returns the reference solution of case c, in solutions/.
func Solution(c check.Case) Target {
	return Target{Case: c, Pkg: check.Module + "/solutions/" + c.Dir()}
}

// Dir returns the target's directory relative to the module root.
func (t Target) Dir() string { return strings.TrimPrefix(t.Pkg, check.Module+"/") }

// srcDir returns the folder that holds the target's files.
func (t Target) srcDir(root string) string {
	if t.Src != "" {
		return t.Src
	}
	return filepath.Join(root, filepath.FromSlash(t.Dir()))
}

// Worker is a worker program built for one target.
type Worker struct {
	Target Target
	// NoRace says why the worker was built without the race detector, or
	// is empty when it has it.
	NoRace string
	// NoPoints says why the worker was built from the implementation's
	// files as they are, without schedule points (see package point), or
	// is empty when it has them.
	NoPoints string

	root string // the module root
	prog *program
	// impl names the target to the program when several are linked in
	// (BuildShared), and is empty when the program holds only this one.
	impl string
}

// program is a built worker binary and the folder that holds it, which
// goes once every Worker that shares it is closed.
type program struct {
	tmp   string // holds the binary and its build's files
	bin   string
	mu    sync.Mutex
	users int
}

func (p *program) release() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.users--; p.users > 0 {
		return nil
	}
	return os.RemoveAll(p.tmp)
}

// BuildError is a target that does not compile, or that the lab refuses
// to build.
type BuildError struct {
	Target Target
	Lines  []string // the compiler's lines, with paths relative to the module root
	// Shape is set when the student's code compiles but its New, or a
	// method the checker calls, has a different signature from the
	// shipped case's.
	Shape bool
	// Missing is set when the target's folder has no Go files.
	Missing bool
	// Refused is set when the code uses what a case may not (see allow.go);
	// Lines then say what and where, and nothing was built.
	Refused bool
}

func (e *BuildError) Error() string {
	return fmt.Sprintf("%s %s:\n%s", e.Target.Dir(), e.Problem(), strings.Join(e.Lines, "\n"))
}

// Problem says in a few words what is wrong: "does not compile", "does not
// fit the checker", "is missing", "uses what a case may not".
func (e *BuildError) Problem() string {
	switch {
	case e.Missing:
		return "is missing"
	case e.Refused:
		return "uses what a case may not"
	case e.Shape:
		return "does not fit the checker"
	}
	return "does not compile"
}

// SetupError is a build that failed before it reached the student's code:
// the Go toolchain could not run here (no HOME for its cache, a module it
// could not download). It is the machine's problem, not the case's.
type SetupError struct{ Msg string }

func (e *SetupError) Error() string {
	return "the Go toolchain could not build the lab here: " + e.Msg
}

// Build builds the worker for target. root is the module root, the folder
// that holds go.mod. With race it builds with the race detector, unless this
// machine cannot (no cgo or no C compiler), in which case it builds without
// it and says why in NoRace. The machine decides that, never the student's
// code: a race build that fails is the code's failure. A target that does
// not compile, or that uses what a case may not, gives a *BuildError.
func Build(ctx context.Context, root string, target Target, race bool) (*Worker, error) {
	return buildWorker(ctx, root, target, race, false)
}

// buildWorker is Build; trustImports skips the import check, for the tests that
// prove the grader's second line of defence.
func buildWorker(ctx context.Context, root string, target Target, race, trustImports bool) (*Worker, error) {
	if err := admit(root, target, trustImports); err != nil {
		return nil, err
	}
	ws, err := link(ctx, root, []Target{target}, race)
	if err != nil {
		return nil, err
	}
	return ws[0], nil
}

// BuildShared builds one worker program for several targets of one case,
// each graded by its Worker exactly as Build's would grade it: each check
// runs in a child of its own that calls only that target's code. It saves
// a link per target, which is most of what building a worker costs once
// the checker is compiled; the library grades each case's entries this
// way. A target kept outside the lab (Target.Src) has its files laid over
// its own package folder, which need not exist.
// When one target is refused or does not compile, no program is built,
// and the error is that target's, as Build would give it.
func BuildShared(ctx context.Context, root string, targets []Target, race bool) ([]*Worker, error) {
	if len(targets) == 0 {
		return nil, errors.New("grade: no targets to build")
	}
	for _, t := range targets {
		if t.Case.Number != targets[0].Case.Number {
			return nil, fmt.Errorf("grade: %s and %s are of different cases", targets[0].Dir(), t.Dir())
		}
		if err := admit(root, t, false); err != nil {
			return nil, err
		}
	}
	ws, err := link(ctx, root, targets, race)
	var be *BuildError
	var se *SetupError
	if (errors.As(err, &be) || errors.As(err, &se)) && len(targets) > 1 && ctx.Err() == nil {
		// The compiler's lines are read in the first target's terms: build
		// each alone to name the one at fault, in its own words.
		for _, t := range targets {
			w, err := Build(ctx, root, t, race)
			if err != nil {
				return nil, err
			}
			w.Close()
		}
	}
	return ws, err
}

// admit refuses a target with no Go files, or that uses what a case may
// not (see allow.go), before anything is built.
func admit(root string, target Target, trustImports bool) error {
	src := target.srcDir(root)
	if !hasGoFiles(src) {
		return &BuildError{Target: target, Missing: true, Lines: []string{fmt.Sprintf(
			"%s has no Go files. To start the case again: go run ./shop reset %d", target.Dir(), target.Case.Number)}}
	}
	if trustImports {
		return nil
	}
	refused, err := scan(src, target.Dir(), target.Case)
	if err != nil {
		return fmt.Errorf("grade: reading %s: %w", target.Dir(), err)
	}
	if len(refused) > 0 {
		e := &BuildError{Target: target, Refused: true}
		for _, r := range refused {
			e.Lines = append(e.Lines, r.String())
		}
		return e
	}
	return nil
}

// link builds one worker program with every target linked in, and returns
// a Worker for each, in order.
func link(ctx context.Context, root string, targets []Target, race bool) ([]*Worker, error) {
	tmp, err := os.MkdirTemp("", "stampede-worker-")
	if err != nil {
		return nil, fmt.Errorf("grade: %w", err)
	}
	prog := &program{tmp: tmp, bin: filepath.Join(tmp, "worker"+exe()), users: 1}
	first := &Worker{Target: targets[0], root: root, prog: prog}
	if race {
		first.NoRace = RaceUnavailable(ctx)
	}
	err = first.build(ctx, targets, race && first.NoRace == "", true)
	if err != nil && ctx.Err() == nil {
		// The compiler's messages must be about the student's own files,
		// not the copies with schedule points (another path, and columns
		// moved): build the files as they are. If that build works, the
		// points broke it (a name of the student's that clashes with the
		// points' import): grade without them rather than fail the
		// student for the checker's copy.
		withPoints := err
		err = first.build(ctx, targets, race && first.NoRace == "", false)
		if err == nil {
			first.NoPoints = "the grader's copy with schedule points did not build: " + withPoints.Error()
		}
	}
	if err != nil {
		prog.release()
		return nil, err
	}
	ws := []*Worker{first}
	if len(targets) > 1 {
		first.impl = targets[0].Pkg
		prog.users = len(targets)
		for _, t := range targets[1:] {
			ws = append(ws, &Worker{Target: t, NoRace: first.NoRace, NoPoints: first.NoPoints, root: root, prog: prog, impl: t.Pkg})
		}
	}
	return ws, nil
}

func exe() string {
	if runtime.GOOS == "windows" {
		return ".exe"
	}
	return ""
}

// Close removes the worker's files, once every Worker that shares its
// program is closed. (Its children's process groups end with each child.)
func (w *Worker) Close() error { return w.prog.release() }

// bindFile is the generated file that links the implementation in.
const bindFile = "zz_bind.go"

// build builds the worker program; with points, from copies of the
// targets' files with schedule points in them (see package point). It
// builds in the targets' slot (slot.go) when the machine has one and the
// targets' files are the checkout's own, and copies the program out;
// otherwise (a class's submissions, each graded once) in the worker's own
// folder.
func (w *Worker) build(ctx context.Context, targets []Target, race, points bool) error {
	dir := slotsDir()
	if dir == "" || !inCheckout(w.root, targets) {
		return w.buildIn(ctx, w.prog.tmp, w.prog.bin, targets, race, points)
	}
	trimSlots(dir, time.Now())
	s, err := openSlot(ctx, dir, slotKey(w.root, targets, race, points))
	if err != nil {
		return err
	}
	if s == nil {
		return w.buildIn(ctx, w.prog.tmp, w.prog.bin, targets, race, points)
	}
	defer s.close()
	name := "worker" + exe()
	if err := w.buildIn(ctx, s.dir, filepath.Join(s.dir, name), targets, race, points); err != nil {
		return err
	}
	return s.copyOut(name, w.prog.bin)
}

// buildIn builds the worker program to bin, with the files the overlay
// lays over the lab written in dir.
func (w *Worker) buildIn(ctx context.Context, dir, bin string, targets []Target, race, points bool) error {
	bind := filepath.Join(dir, bindFile)
	if err := os.WriteFile(bind, bindSource(targets), 0o644); err != nil {
		return fmt.Errorf("grade: %w", err)
	}
	replace := map[string]string{filepath.Join(w.root, "checker", "worker", bindFile): bind}
	for i, t := range targets {
		if err := overlaySrc(w.root, t, replace); err != nil {
			return err
		}
		if points {
			if err := overlayPoints(w.root, t, filepath.Join(dir, fmt.Sprintf("points%d", i)), replace); err != nil {
				return err
			}
		}
	}
	overlay, err := json.Marshal(map[string]map[string]string{"Replace": replace})
	if err != nil {
		return fmt.Errorf("grade: %w", err)
	}
	overlayPath := filepath.Join(dir, "overlay.json")
	if err := os.WriteFile(overlayPath, overlay, 0o644); err != nil {
		return fmt.Errorf("grade: %w", err)
	}

	out, err := w.goBuild(ctx, overlayPath, bin, race)
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if _, ok := err.(*exec.ExitError); !ok {
		return fmt.Errorf("grade: running go build: %w", err)
	}
	return w.buildError(out)
}

// bindSource is the generated file that links targets in, all of one case.
func bindSource(targets []Target) []byte {
	var imports, binds strings.Builder
	fmt.Fprintf(&imports, "\tsuite %q\n", check.Module+"/checker/"+targets[0].Case.Dir())
	for i, t := range targets {
		fmt.Fprintf(&imports, "\timpl%d %q\n", i, t.Pkg)
		fmt.Fprintf(&binds, "\t\t%q: suite.Bind(impl%d.New),\n", t.Pkg, i)
	}
	return fmt.Appendf(nil, `// Code generated by the stampede lab's command; DO NOT EDIT.

package main

import (
	"stampede/checker/harness"

%s)

func init() {
	impls = map[string]harness.Bound{
%s	}
}
`, imports.String(), binds.String())
}

// overlaySrc lays the files of a target kept outside the lab (Target.Src)
// over its package folder below root: each Go file of Src replaces or adds
// the file of that name, and the folder's other Go files are hidden. The
// folder need not exist.
func overlaySrc(root string, t Target, replace map[string]string) error {
	if t.Src == "" {
		return nil
	}
	dst := filepath.Join(root, filepath.FromSlash(t.Dir()))
	own, _ := filepath.Glob(filepath.Join(dst, "*.go"))
	for _, f := range own {
		replace[f] = "" // hidden unless Src has a file of the same name
	}
	theirs, err := filepath.Glob(filepath.Join(t.Src, "*.go"))
	if err != nil {
		return fmt.Errorf("grade: %w", err)
	}
	for _, f := range theirs {
		abs, err := filepath.Abs(f)
		if err != nil {
			return fmt.Errorf("grade: %w", err)
		}
		replace[filepath.Join(dst, filepath.Base(f))] = abs
	}
	return nil
}

// overlayPoints lays, over each Go file of a target, a copy with schedule
// points in it, written to dir. A file that does not parse is left as it
// is: the compiler will say what is wrong with it, in its own lines.
func overlayPoints(root string, t Target, dir string, replace map[string]string) error {
	files, err := filepath.Glob(filepath.Join(t.srcDir(root), "*.go"))
	if err != nil {
		return fmt.Errorf("grade: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("grade: %w", err)
	}
	pkgDir := filepath.Join(root, filepath.FromSlash(t.Dir()))
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			return fmt.Errorf("grade: %w", err)
		}
		out, err := point.Rewrite(filepath.Base(f), src)
		if err != nil {
			continue
		}
		copyPath := filepath.Join(dir, filepath.Base(f))
		if err := os.WriteFile(copyPath, out, 0o644); err != nil {
			return fmt.Errorf("grade: %w", err)
		}
		replace[filepath.Join(pkgDir, filepath.Base(f))] = copyPath
	}
	return nil
}

func (w *Worker) goBuild(ctx context.Context, overlay, bin string, race bool) ([]byte, error) {
	// -w leaves out the debugger's tables (DWARF): a fifth less time to
	// link, paid on every grade. Stack traces, panics and the race
	// detector's reports read the runtime's own table, which stays.
	args := []string{"build", "-trimpath", "-ldflags=-w", "-overlay=" + overlay, "-o", bin}
	if race {
		args = append(args, "-race")
	}
	cmd := exec.CommandContext(ctx, "go", append(args, "./checker/worker")...)
	cmd.Dir = w.root
	// The compiler's scratch files go in the worker's folder, so that a
	// build stopped half way (Ctrl-C, a cancelled CI job) leaves nothing
	// behind once the folder is removed.
	cmd.Env = append(os.Environ(), "GOTMPDIR="+w.prog.tmp)
	cmd.Cancel = func() error { return interrupt(cmd.Process) }
	cmd.WaitDelay = 5 * time.Second
	return cmd.CombinedOutput()
}

// RaceUnavailable says why this machine cannot build with the race
// detector, or returns "" when it can. It asks the toolchain about the
// machine (cgo on, a C compiler found), so that nothing in the student's
// files can make the grader believe the detector is missing.
func RaceUnavailable(ctx context.Context) string {
	out, err := exec.CommandContext(ctx, "go", "env", "CGO_ENABLED", "CC").Output()
	if err != nil {
		return "the race detector needs cgo, and `go env` did not say whether it is on"
	}
	f := strings.Fields(string(out))
	if len(f) < 1 || f[0] != "1" {
		return "the race detector needs cgo, which is off here (CGO_ENABLED=0)"
	}
	if len(f) < 2 {
		return "the race detector needs a C compiler, and go env names none"
	}
	if _, err := exec.LookPath(f[1]); err != nil {
		return fmt.Sprintf("the race detector needs a C compiler, and %s is not installed", f[1])
	}
	return ""
}

// buildError turns the compiler's output into a *BuildError, naming the
// student's files by their path in the lab, or into a *SetupError when the
// toolchain failed before it compiled anything of the student's.
func (w *Worker) buildError(out []byte) error {
	e := &BuildError{Target: w.Target}
	text := string(bytes.TrimSpace(out))
	if missing(text) && !hasGoFiles(w.Target.srcDir(w.root)) {
		e.Missing = true
		e.Lines = []string{fmt.Sprintf("%s has no Go files. To start the case again: go run ./shop reset %d",
			w.Target.Dir(), w.Target.Case.Number)}
		return e
	}
	pkgDir := w.Target.Dir() + "/"
	mine, bindErr := false, false
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "# ") {
			continue
		}
		line = strings.ReplaceAll(line, w.root+string(filepath.Separator), "")
		if w.Target.Src != "" {
			line = strings.ReplaceAll(line, w.Target.Src+string(filepath.Separator), pkgDir)
		}
		line = filepath.ToSlash(line)
		switch {
		case strings.Contains(line, bindFile+":"): // a compiler error in the generated file
			bindErr = true
			continue
		case strings.Contains(line, pkgDir):
			mine = true
		}
		e.Lines = append(e.Lines, line)
	}
	// The generated file fails to compile when New or a method the
	// checker calls has another signature, and only then is it a shape
	// problem. Anything else it reports (a package main, two packages in
	// one folder) is said by the compiler in the student's terms.
	if bindErr && !mine {
		if shape := w.shapeLines(); len(shape) > 0 {
			e.Shape = true
			e.Lines = append(shape, e.Lines...)
		}
	}
	if !mine && !e.Shape {
		if bindErr {
			e.Lines = append([]string{"the checker could not use this package: New, or a method the checker calls, may not be what the case shipped with"}, e.Lines...)
			e.Shape = true
			return e
		}
		return &SetupError{Msg: text}
	}
	if len(e.Lines) == 0 {
		e.Lines = []string{text}
	}
	return e
}

func hasGoFiles(dir string) bool {
	names, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	for _, n := range names {
		if !strings.HasSuffix(n, "_test.go") {
			return true
		}
	}
	return false
}
