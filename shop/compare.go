package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"stampede/checker"
	"stampede/checker/check"
	"stampede/checker/compare"
)

// compareCmd plays one workload (by default chapter 11's worked example)
// through every technique's reference solution, and with --student
// through the student's own cases, and prints the table.
//
// The reference solutions run in this process: they are the lab's own
// code, like the checker. The student's code never does (see studentRow).
func compareCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	wl := compare.Default()
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	fs.IntVar(&wl.Servers, "servers", wl.Servers, "app servers")
	fs.IntVar(&wl.Rate, "rate", wl.Rate, "reads per second, all servers together")
	fs.DurationVar(&wl.Rebuild, "rebuild", wl.Rebuild, "how long the source query takes")
	student := fs.Bool("student", false, "add a row for each case of the table you have changed in cases/")
	rest, err := parse(fs, args, false)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usagef("compare takes no arguments, only flags (--servers, --rate, --rebuild, --student)")
	}
	wl = wl.Fit()
	if err := wl.Check(); err != nil {
		return usagef("compare: %v", err)
	}
	rows := compare.Reference()
	var results []compare.Result
	began := time.Now()
	for _, row := range rows {
		res, err := compare.Play(ctx, wl, row, compare.Options{})
		if err != nil {
			return err
		}
		results = append(results, res)
	}
	// The variants: rows played again on workloads of their own.
	variants := compare.Variants()
	again := make([]compare.Result, len(variants))
	for i, v := range variants {
		for _, row := range rows {
			if row.Case != v.Case {
				continue
			}
			if again[i], err = compare.Play(ctx, v.Workload(wl), row, compare.Options{}); err != nil {
				return err
			}
		}
	}
	played := time.Since(began)
	if *student {
		root, err := moduleRoot()
		if err != nil {
			return err
		}
		mine, notes := studentRows(ctx, root, wl, newProgress(stderr))
		results = append(results, mine...)
		defer func() {
			for _, n := range notes {
				fmt.Fprintln(stdout, n)
			}
		}()
	}
	fmt.Fprintf(stdout, "Every technique's real code on one workload (docs/11-side-by-side.md explains the table)\n\n")
	compare.Render(stdout, wl, rows, results)
	for i, v := range variants {
		v.Render(stdout, v.Workload(wl), again[i])
	}
	var each []string
	for _, r := range results[:len(rows)] {
		each = append(each, fmt.Sprintf("%s %s", r.Technique, seconds(r.Elapsed)))
	}
	for i, v := range variants {
		each = append(each, fmt.Sprintf("case %d again %s", v.Case, seconds(again[i].Elapsed)))
	}
	fmt.Fprintf(stdout, "\nPlayed in %s of real time: %s.\n", seconds(played), strings.Join(each, ", "))
	return nil
}

func seconds(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) }

// studentKill is how long a student's row may take, build aside: a row
// plays in about a second, and the driver gives up on code that does not
// come to rest within five.
const studentKill = time.Minute

// studentRows plays the table's workload through each case of the table
// that the student has changed since it shipped: "solved" here means only
// that, and whether it passes is `shop check`'s business. Each case is
// built into a program of its own with the student's package linked in, as
// the grader builds its worker, and run as a child process with a time
// limit, so a case that does not compile, crashes or hangs costs its own
// row and nothing else. It is not a grade: nothing is signed, the race
// detector is off (it would slow the play tenfold), and the import list is
// not enforced.
func studentRows(ctx context.Context, root string, wl compare.Workload, p *progress) ([]compare.Result, []string) {
	var results []compare.Result
	var notes []string
	for _, a := range compare.Cases() {
		c, ok := checker.Find(a.Case)
		if !ok {
			continue
		}
		if same, err := checker.Pristine(root, c); err == nil && same {
			notes = append(notes, fmt.Sprintf("(--student: cases/%s is as shipped, so case %d has no row of yours yet.)", c.Dir(), c.Number))
			continue
		}
		p.Status("building and playing cases/%s...", c.Dir())
		res := studentRow(ctx, root, wl, a, check.Module+"/cases/"+c.Dir(), "cases/"+c.Dir())
		p.Clear()
		results = append(results, res)
	}
	return results, notes
}

// studentRow builds the package pkg (shown as code) into the student
// program with case a's adapter, and plays it; whatever goes wrong is the
// row's Err.
func studentRow(ctx context.Context, root string, wl compare.Workload, a compare.Adapter, pkg, code string) compare.Result {
	res := compare.Result{Technique: a.Technique, Code: code, Case: a.Case}
	tmp, err := os.MkdirTemp("", "stampede-compare-")
	if err != nil {
		res.Err = err.Error()
		return res
	}
	defer os.RemoveAll(tmp)
	bin := filepath.Join(tmp, "student")
	bind := filepath.Join(tmp, "zz_row.go")
	overlay := filepath.Join(tmp, "overlay.json")
	src := a.BindFile(pkg, code)
	data, _ := json.Marshal(map[string]map[string]string{"Replace": {
		filepath.Join(root, "checker", "compare", "student", "zz_row.go"): bind,
	}})
	if err := errors.Join(os.WriteFile(bind, []byte(src), 0o644), os.WriteFile(overlay, data, 0o644)); err != nil {
		res.Err = err.Error()
		return res
	}
	// Built as `go run ./shop` was (no -race, no -trimpath), so that every
	// package but the student's and compare's comes from the build cache.
	build := exec.CommandContext(ctx, "go", "build", "-overlay="+overlay, "-o", bin, "./checker/compare/student")
	build.Dir = root
	build.Env = append(os.Environ(), "GOTMPDIR="+tmp)
	if out, err := build.CombinedOutput(); err != nil {
		res.Err = "does not compile: " + firstLines(string(out), root, 3)
		return res
	}
	runCtx, cancel := context.WithTimeout(ctx, studentKill)
	defer cancel()
	play := exec.CommandContext(runCtx, bin,
		fmt.Sprint("-servers=", wl.Servers), fmt.Sprint("-rate=", wl.Rate), "-rebuild="+wl.Rebuild.String())
	play.WaitDelay = 5 * time.Second
	var out, errOut bytes.Buffer
	play.Stdout, play.Stderr = &out, &errOut
	err = play.Run()
	switch {
	case runCtx.Err() != nil:
		res.Err = fmt.Sprintf("still running after %v; stopped", studentKill)
	case err != nil:
		res.Err = "crashed: " + firstLines(errOut.String(), root, 2)
	default:
		if err := json.Unmarshal(out.Bytes(), &res); err != nil {
			res.Err = "gave no result: " + err.Error()
		}
	}
	return res
}

// firstLines returns the first n lines of a program's output that say
// something, joined, with the lab's folder taken off paths.
func firstLines(text, root string, n int) string {
	var keep []string
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(strings.ReplaceAll(l, root+string(filepath.Separator), ""))
		if l == "" || strings.HasPrefix(l, "# ") || strings.HasPrefix(l, "goroutine ") {
			continue
		}
		keep = append(keep, l)
		if len(keep) == n {
			break
		}
	}
	return strings.Join(keep, "; ")
}
