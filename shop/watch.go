package main

import (
	"context"
	"crypto/sha256"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mattn/go-isatty"

	"stampede/checker"
	"stampede/checker/check"
	"stampede/checker/grade"
)

// pollEvery is how often watch looks for a saved file. Looking costs a walk
// of the case's folder, a few files (microseconds); between looks the
// command sleeps. A save is seen within a tenth of a second, a small part
// of the student's wait for the first verdict.
const pollEvery = 100 * time.Millisecond

func watchCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("watch", flag.ContinueOnError)
	stay := fs.Bool("stay", false, "stay on the case after it passes (for the exercises)")
	rest, err := parse(fs, args, false)
	if err != nil {
		return err
	}
	if len(rest) > 1 {
		return usagef("watch takes at most one case number, such as: go run ./shop watch 1")
	}
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	cases := checker.Cases()
	p := newProgress(stderr)
	if _, err := prepare(ctx, root, true, cases, p); err != nil {
		return err
	}
	start := 0
	if len(rest) == 1 {
		c, err := caseArg(rest[0])
		if err != nil {
			return err
		}
		start = indexOf(cases, c.Number)
	} else {
		// The first case that is not solved yet: a changed case is checked
		// to know, a few seconds each, so each says so.
		for start < len(cases) {
			p.Line("looking for your first unsolved case: case %d...", cases[start].Number)
			st, err := statusOf(ctx, root, cases[start])
			if err != nil {
				return err
			}
			if st != Solved {
				break
			}
			start++
		}
	}
	if *stay {
		cases = cases[start : start+1]
		start = 0
	}
	w := watcher{
		out:   stdout,
		stay:  *stay,
		cases: cases,
		clear: isTerminal(stdout),
		grade: func(ctx context.Context, out io.Writer, c check.Case) (grade.Report, error) {
			return gradePrinting(ctx, out, grade.Student(c), grade.Options{Root: root, Repeat: defaultRepeat}, false)
		},
		snapshot: func(c check.Case) (string, error) { return snapshot(filepath.Join(root, "cases", c.Dir())) },
		sleep:    sleepCtx,
	}
	w.saved = w.waitForChange
	return w.run(ctx, start)
}

func indexOf(cases []check.Case, n int) int {
	for i, c := range cases {
		if c.Number == n {
			return i
		}
	}
	return 0
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// watcher checks a case each time a file under cases/ changes, and moves
// on to the next case when one passes.
type watcher struct {
	out   io.Writer
	stay  bool // keep checking the one case after it passes
	cases []check.Case
	clear bool
	// grade grades a case and prints its report to out as it goes.
	grade func(ctx context.Context, out io.Writer, c check.Case) (grade.Report, error)
	// snapshot changes whenever a file of the case's folder does. A save
	// anywhere else cannot change the case's verdict (a case may import
	// no other case), so it is not checked again for one.
	snapshot func(c check.Case) (string, error)
	sleep    func(context.Context, time.Duration) error
	// saved, when set, watches for a save while a grade runs: it returns
	// nil once c's folder differs from before (waitForChange), and the
	// grade of the files as they were is stopped. Nil: a save during a
	// grade is seen once it ends.
	saved func(ctx context.Context, c check.Case, before string) error
}

// run watches from cases[i] on, until every case is solved or ctx ends.
func (w watcher) run(ctx context.Context, i int) error {
	for i < len(w.cases) {
		c := w.cases[i]
		before, err := w.snapshot(c)
		if err != nil {
			return err
		}
		if w.clear {
			fmt.Fprint(w.out, "\x1b[H\x1b[2J")
		} else {
			fmt.Fprintln(w.out, strings.Repeat("-", 72))
		}
		fmt.Fprintf(w.out, "Watching cases/%s (Ctrl-C to stop). Case %d: %s\n\n", c.Dir(), c.Number, c.Title)
		rep, stale, err := w.gradeUntilSaved(ctx, c, before)
		if err != nil {
			return err
		}
		if stale {
			// Its verdicts were of the files before the save: check the
			// files as they are now at once.
			dim.Fprintf(w.out, "\ncases/%s changed: checking again.\n", c.Dir())
			continue
		}
		if statusOfReport(rep) == CasePass && !w.stay {
			green.Fprintf(w.out, "\nCase %d solved.", c.Number)
			if i+1 < len(w.cases) {
				fmt.Fprintf(w.out, " On to case %d: read %s.\n", w.cases[i+1].Number, w.cases[i+1].Chapter)
			}
			fmt.Fprintln(w.out)
			i++
			continue
		}
		dim.Fprintf(w.out, "\nSave a file under cases/%s to check again.\n", c.Dir())
		if err := w.waitForChange(ctx, c, before); err != nil {
			return err
		}
	}
	green.Fprintln(w.out, "Every case is solved.")
	return nil
}

// gradeUntilSaved grades c, and stops the grade when a file of c's folder
// is saved meanwhile (w.saved): stale then reports that the grade was of
// files that are gone, and its report is to be dropped.
func (w watcher) gradeUntilSaved(ctx context.Context, c check.Case, before string) (rep grade.Report, stale bool, err error) {
	if w.saved == nil {
		rep, err = w.grade(ctx, w.out, c)
		return rep, false, err
	}
	gctx, stop := context.WithCancel(ctx)
	defer stop()
	// Once the save is seen, the grade's last words are "interrupted"
	// verdicts about files that are gone: out drops them.
	out := &shutter{w: w.out}
	var changed atomic.Bool
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		if w.saved(gctx, c, before) == nil {
			changed.Store(true)
			out.shut()
			stop()
		}
	}()
	rep, err = w.grade(gctx, out, c)
	stop()
	<-watched
	if ctx.Err() != nil {
		return rep, false, ctx.Err()
	}
	if changed.Load() {
		return rep, true, nil
	}
	return rep, false, err
}

// shutter passes writes on to w until it is shut, and drops them after.
type shutter struct {
	mu     sync.Mutex
	w      io.Writer
	closed bool
}

func (s *shutter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return len(p), nil
	}
	return s.w.Write(p)
}

func (s *shutter) shut() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
}

// waitForChange sleeps between looks until the snapshot of c's folder
// differs from before.
func (w watcher) waitForChange(ctx context.Context, c check.Case, before string) error {
	for {
		if err := w.sleep(ctx, pollEvery); err != nil {
			return err
		}
		now, err := w.snapshot(c)
		if err != nil {
			return err
		}
		if now != before {
			return nil
		}
	}
}

// snapshot describes every file below dir by name and a hash of what it
// holds, so that a save that changes a file changes it, and one that
// changes nothing does not: an editor's save of an unchanged buffer, a
// touch, or an edit undone and saved again checks nothing anew, nor stops
// a check that is running. (A case's folder is a few small files: reading
// them ten times a second costs microseconds.)
func snapshot(dir string) (string, error) {
	var b strings.Builder
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return nil // removed while we looked: the next look sees it
		}
		fmt.Fprintf(&b, "%s %x\n", path, sha256.Sum256(data))
		return nil
	})
	return b.String(), err
}
