package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fatih/color"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"stampede/checker"
	"stampede/checker/check"
	"stampede/checker/grade"
)

var update = flag.Bool("update", false, "write the saved JSON report, and the Classroom workflow's tests, anew")

func TestMain(m *testing.M) {
	color.NoColor = true
	os.Exit(m.Run())
}

func runShop(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestUsageErrorsAreOneLineAndExitTwo(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"frobnicate"},
		{"check"},
		{"check", "one"},
		{"check", "99"},
		{"check", "1", "--no-such-flag"},
		{"check", "1", "--repeat", "0"},
		{"run"},
		{"hint", "x"},
		{"diff"},
		{"list", "extra"},
		{"setup", "extra"},
		{"grade"},
		{"grade", "--only", "9", "x"},
		{"check", "1", "--solution", "--cases", "x"},
		{"check", "1", "--cases", "/no/such/folder"},
		{"run", "1", "--solution", "--cases", "x"},
		{"check", "6", "--redis", "localhost:6379"},
	} {
		code, _, stderr := runShop(t, args...)
		assert.Equal(t, exitUsage, code, "shop %v", args)
		assert.Equal(t, 1, strings.Count(stderr, "\n"), "shop %v: %q", args, stderr)
		assert.True(t, strings.HasPrefix(stderr, "shop: "), "shop %v: %q", args, stderr)
		assert.NotContains(t, stderr, "goroutine", "shop %v", args)
	}
}

func TestFlagsMayFollowTheCaseNumber(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	sol := fs.Bool("solution", false, "")
	rep := fs.Int("repeat", 1, "")
	rest, err := parse(fs, []string{"1", "--solution", "--repeat", "4"}, false)
	require.NoError(t, err)
	assert.Equal(t, []string{"1"}, rest)
	assert.True(t, *sol)
	assert.Equal(t, 4, *rep)

	rest, err = parse(flag.NewFlagSet("run", flag.ContinueOnError), []string{"6", "--instances=3"}, true)
	require.NoError(t, err)
	assert.Equal(t, []string{"6", "--instances=3"}, rest, "run hands unknown flags to the story")
}

func TestCheckShippedCaseFailsAndSolutionPasses(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the worker")
	}
	// Never the lab's own cases/: on a student's clone it holds their work.
	shipped := submissionDir(t, "shipped", fromShipped, 1)
	code, out, _ := runShop(t, "check", "1", "--repeat", "1", "--cases", shipped)
	assert.Equal(t, exitFail, code)
	c, _ := checker.Find(1)
	once, _ := c.Check("once")
	assert.Contains(t, out, "  FAIL  "+once.Name+" (ran 50)")
	assert.Contains(t, out, "  PASS  no data race")
	// As shipped, case 1 fails the stampede's checks and the explorers'.
	assert.Contains(t, out, fmt.Sprintf("\n%d passed, 4 failed\n", len(c.Checks)-4))
	assert.Contains(t, out, "(checking "+filepath.Join(shipped, "cases", "case01")+")", "the header names the folder graded")

	code, out, _ = runShop(t, "check", "1", "--solution", "--repeat", "1")
	assert.Equal(t, exitPass, code, out)
	assert.Contains(t, out, fmt.Sprintf("\n%d passed, 0 failed\n", len(c.Checks)))
}

func TestCheckJSONIsOneDocument(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the worker")
	}
	shipped := submissionDir(t, "shipped", fromShipped, 1)
	code, out, _ := runShop(t, "check", "1", "--json", "--repeat", "1", "--cases", shipped)
	assert.Equal(t, exitFail, code)
	var doc Document
	require.NoError(t, json.Unmarshal([]byte(out), &doc), out)
	assert.Equal(t, Schema, doc.Schema)
	require.Len(t, doc.Cases, 1)
	assert.Equal(t, 0, doc.Score.Points, "3 checks of 5 pass, and a case is worth its points only when all do")
	assert.Equal(t, points(1), doc.Score.MaxPoints)
	assert.Equal(t, 3, doc.Score.Passed)
	assert.Equal(t, "once", doc.Cases[0].Checks[1].ID)
	assert.Equal(t, check.Fail, doc.Cases[0].Checks[1].Status)
	assert.NotEmpty(t, doc.Lab.Commit)
	assert.NotEmpty(t, doc.GradedAt)
	assert.Equal(t, "shipped", doc.Student.Name, "a folder that is not a clone is named by its folder")
	assert.Equal(t, shipped, doc.Submission.Dir)
}

// TestJSONReportMatchesSavedDocument pins the schema that classroom
// autograders read: a change to it shows here first. Run with -update to
// rewrite testdata/report.json after a deliberate change, and say so in
// docs/instructors.md.
func TestJSONReportMatchesSavedDocument(t *testing.T) {
	c1, _ := checker.Find(1)
	reps := []grade.Report{
		{
			Target: grade.Student(c1),
			Results: []check.Result{
				{ID: "served", Name: "all served", Status: check.Pass, Figure: "50 of 50", Runs: 3, Passed: 3},
				{ID: "once", Name: "once", Status: check.Fail, Figure: "ran 50", Message: "50 queries", Runs: 3},
				{ID: "race", Name: "no data race", Status: check.Fail, Message: "race: write at a.go:1 against read at a.go:2", Detail: "WARNING: DATA RACE ..."},
				{ID: "skipped", Name: "skipped", Status: check.Skip, Message: "no cgo"},
			},
		},
		{
			Target: grade.Target{Case: check.Case{Number: 2, Title: "Broken"}, Pkg: check.Module + "/cases/case02"},
			Build:  &grade.BuildError{Lines: []string{"cases/case02/shop.go:3:1: syntax error"}},
			Results: []check.Result{
				{ID: "x", Name: "x", Status: check.Fail, Message: "not run: cases/case02 does not compile"},
			},
		},
		{
			Target: grade.Target{Case: check.Case{Number: 3, Title: "Solved"}, Pkg: check.Module + "/cases/case03"},
			Results: []check.Result{
				{ID: "a", Name: "a", Status: check.Pass, Runs: 3, Passed: 3},
				{ID: "race", Name: "no data race", Status: check.Pass, Runs: 3, Passed: 3},
			},
		},
		{
			Target: grade.Target{Case: check.Case{Number: 4, Title: "No race detector"}, Pkg: check.Module + "/cases/case04"},
			NoRace: "this machine cannot build with the race detector",
			Results: []check.Result{
				{ID: "a", Name: "a", Status: check.Pass, Runs: 3, Passed: 3},
				{ID: "race", Name: "no data race", Status: check.Skip, Message: "this machine cannot build with the race detector"},
			},
		},
	}
	meta := Meta{
		Lab:        Lab{Commit: "0123456789abcdef0123456789abcdef01234567"},
		GradedAt:   "2026-01-02T03:04:05Z",
		Student:    Person{Name: "Ada Student", Email: "ada@example.org", Source: "git config"},
		Submission: Submission{Dir: ".", Commit: "89abcdef0123456789abcdef0123456789abcdef"},
	}
	var got bytes.Buffer
	require.NoError(t, writeJSON(&got, document(meta, "cases", reps, false)))
	path := filepath.Join("testdata", "report.json")
	if *update {
		require.NoError(t, os.WriteFile(path, got.Bytes(), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.JSONEq(t, string(want), got.String())
	assert.NotContains(t, got.String(), "WARNING: DATA RACE", "details only with --verbose")
}

func TestLineDiff(t *testing.T) {
	a := []string{"a", "b", "c", "d"}
	b := []string{"a", "c", "d", "e"}
	var kinds []string
	for _, o := range lineDiff(a, b) {
		kinds = append(kinds, string(o.kind)+o.text)
	}
	assert.Equal(t, []string{" a", "-b", " c", " d", "+e"}, kinds)

	var out bytes.Buffer
	printUnified(&out, "x", "y", a, b)
	assert.Equal(t, "--- x\n+++ y\n@@ -1,4 +1,4 @@\n a\n-b\n c\n d\n+e\n", out.String())

	out.Reset()
	printUnified(&out, "x", "y", a, a)
	assert.Empty(t, out.String(), "no diff between equal files")
}

// fakeLab makes a folder that looks like the lab's root to moduleRoot.
func fakeLab(t *testing.T) string {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module stampede\n"), 0o644))
	t.Chdir(dir)
	return dir
}

func TestHintsComeOneStepAtATime(t *testing.T) {
	root := fakeLab(t)
	c, _ := checker.Find(1)
	_, out, _ := runShop(t, "hint", "1")
	assert.Contains(t, out, "1. "+c.Hints[0])
	assert.NotContains(t, out, "2. ")
	_, out, _ = runShop(t, "hint", "1")
	assert.Contains(t, out, "2. "+c.Hints[1])
	_, out, _ = runShop(t, "hint", "1", "--all")
	assert.Contains(t, out, c.Hints[len(c.Hints)-1])
	assert.Contains(t, out, "go run ./shop diff 1")
	assert.FileExists(t, filepath.Join(root, stateFile))
	_, _, _ = runShop(t, "hint", "1", "--reset")
	_, out, _ = runShop(t, "hint", "1")
	assert.NotContains(t, out, "2. ")
}

func TestEveryCaseHasThreeHintsEndingAtTheSolution(t *testing.T) {
	for _, c := range checker.Cases() {
		assert.GreaterOrEqual(t, len(c.Hints), 3, "case %d", c.Number)
		if len(c.Hints) > 0 {
			assert.Contains(t, c.Hints[len(c.Hints)-1], "solutions/"+c.Dir(), "case %d's last hint names the reference", c.Number)
		}
	}
}

func TestWatchRechecksOnSaveAndMovesOn(t *testing.T) {
	c1 := check.Case{Number: 1, Title: "one"}
	c2 := check.Case{Number: 2, Title: "two"}
	snaps := []string{"v1", "v1", "v1", "v2", "v2", "v2"}
	var grades []int
	passes := map[int][]bool{1: {false, true}, 2: {true}}
	sleeps := 0
	var out bytes.Buffer
	w := watcher{
		out:   &out,
		cases: []check.Case{c1, c2},
		grade: func(_ context.Context, out io.Writer, c check.Case) (grade.Report, error) {
			grades = append(grades, c.Number)
			ok := passes[c.Number][0]
			passes[c.Number] = passes[c.Number][1:]
			st := check.Fail
			if ok {
				st = check.Pass
			}
			rep := grade.Report{Target: grade.Target{Case: c}, Results: []check.Result{{ID: "x", Name: "x", Status: st}}}
			printReport(out, rep, false)
			return rep, nil
		},
		snapshot: func(check.Case) (string, error) {
			s := snaps[0]
			if len(snaps) > 1 {
				snaps = snaps[1:]
			}
			return s, nil
		},
		sleep: func(context.Context, time.Duration) error { sleeps++; return nil },
	}
	require.NoError(t, w.run(context.Background(), 0))
	assert.Equal(t, []int{1, 1, 2}, grades, "checked case 1, again after the save, then case 2")
	// One look before checking, two looks that saw nothing new, one that
	// saw the save: three sleeps, one before each look after the first.
	assert.Equal(t, 3, sleeps, "it slept between looks until the save")
	assert.Contains(t, out.String(), "Case 1 solved.")
	assert.Contains(t, out.String(), "Every case is solved.")
}

// TestWatchStopsAStaleGradeWhenAFileIsSaved: a save while a grade runs
// stops that grade (its verdicts are of the files before the save) and
// checks the files as they are at once.
func TestWatchStopsAStaleGradeWhenAFileIsSaved(t *testing.T) {
	started := make(chan struct{})
	grades, stopped, saves := 0, 0, 0
	var out bytes.Buffer
	w := watcher{
		out:   &out,
		cases: []check.Case{{Number: 1, Title: "one"}},
		grade: func(ctx context.Context, out io.Writer, c check.Case) (grade.Report, error) {
			grades++
			if grades == 1 {
				fmt.Fprintln(out, "  PASS  decided before the save")
				close(started)
				<-ctx.Done() // a long grade, of the files before the save
				stopped++
				fmt.Fprintln(out, "  FAIL  interrupted") // as the grader reports checks it stopped
				return grade.Report{}, ctx.Err()
			}
			rep := grade.Report{Target: grade.Target{Case: c}, Results: []check.Result{{ID: "x", Name: "x", Status: check.Pass}}}
			printReport(out, rep, false)
			return rep, nil
		},
		snapshot: func(check.Case) (string, error) { return "v", nil },
		sleep:    func(context.Context, time.Duration) error { return nil },
	}
	w.saved = func(ctx context.Context, _ check.Case, _ string) error {
		saves++
		if saves == 1 {
			<-started // a save while the first grade runs
			return nil
		}
		<-ctx.Done() // none while the second does
		return ctx.Err()
	}
	require.NoError(t, w.run(context.Background(), 0))
	assert.Equal(t, 2, grades, "graded once before the save and once after")
	assert.Equal(t, 1, stopped, "the grade of the files before the save was stopped")
	assert.Contains(t, out.String(), "cases/case01 changed: checking again.")
	assert.Contains(t, out.String(), "decided before the save", "a verdict printed before the save stays")
	assert.NotContains(t, out.String(), "interrupted", "the stopped grade's last words are about files that are gone")
	assert.Contains(t, out.String(), "Case 1 solved.")
}

// TestWatchStopsOnCtrlCDuringAGrade: stopped while it checks (its context
// ends), watch returns at once, and takes it for no save.
func TestWatchStopsOnCtrlCDuringAGrade(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var out bytes.Buffer
	grades := 0
	w := watcher{
		out:   &out,
		cases: []check.Case{{Number: 1}},
		grade: func(gctx context.Context, _ io.Writer, _ check.Case) (grade.Report, error) {
			grades++
			cancel() // Ctrl-C while the check runs
			<-gctx.Done()
			return grade.Report{}, gctx.Err()
		},
		snapshot: func(check.Case) (string, error) { return "same", nil },
		sleep:    sleepCtx,
	}
	w.saved = w.waitForChange
	assert.ErrorIs(t, w.run(ctx, 0), context.Canceled)
	assert.Equal(t, 1, grades)
	assert.NotContains(t, out.String(), "changed")
}

func TestWatchStopsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	w := watcher{
		out:   &bytes.Buffer{},
		cases: []check.Case{{Number: 1}},
		grade: func(context.Context, io.Writer, check.Case) (grade.Report, error) {
			return grade.Report{Results: []check.Result{{Status: check.Fail}}}, nil
		},
		snapshot: func(check.Case) (string, error) { return "same", nil },
		sleep: func(ctx context.Context, d time.Duration) error {
			cancel()
			return sleepCtx(ctx, d)
		},
	}
	assert.ErrorIs(t, w.run(ctx, 0), context.Canceled)
}

func TestSnapshotChangesWhenAFileIsSaved(t *testing.T) {
	cases := t.TempDir()
	dir := filepath.Join(cases, "case01")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	file := filepath.Join(dir, "shop.go")
	require.NoError(t, os.WriteFile(file, []byte("a"), 0o644))
	before, err := snapshot(dir)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(file, []byte("ab"), 0o644))
	after, err := snapshot(dir)
	require.NoError(t, err)
	assert.NotEqual(t, before, after)

	// A save that changes nothing (an unchanged buffer saved, a touch)
	// checks nothing anew.
	later := time.Now().Add(time.Hour)
	require.NoError(t, os.WriteFile(file, []byte("ab"), 0o644))
	require.NoError(t, os.Chtimes(file, later, later))
	same, err := snapshot(dir)
	require.NoError(t, err)
	assert.Equal(t, after, same, "the same bytes saved again")

	// watch looks at the watched case's folder only: a save in another
	// case's cannot change its verdict.
	other := filepath.Join(cases, "case02")
	require.NoError(t, os.MkdirAll(other, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(other, "shop.go"), []byte("c"), 0o644))
	again, err := snapshot(dir)
	require.NoError(t, err)
	assert.Equal(t, after, again)
}

func TestListShowsShippedCasesAsNotStarted(t *testing.T) {
	lab, err := moduleRoot()
	require.NoError(t, err)
	root := fakeLab(t)
	for _, c := range checker.Cases() {
		copyShipped(t, lab, root, c) // the shipped copy, and cases/ as shipped
		require.NoError(t, writeCase(filepath.Join(root, "cases", c.Dir()), fromShipped(t, lab, c)))
		st, err := statusOf(context.Background(), root, c)
		require.NoError(t, err)
		assert.Equal(t, NotStarted, st, "case %d", c.Number)
	}
	// On a fresh clone, list neither grades nor compiles anything.
	code, out, stderr := runShop(t, "list")
	assert.Equal(t, exitPass, code, stderr)
	assert.Equal(t, len(checker.Cases()), strings.Count(out, "not started"), out)
	assert.Contains(t, out, fmt.Sprintf("0 of %d solved", len(checker.Cases())))
	assert.Empty(t, stderr)
}

func TestResetRestoresTheShippedCaseAndKeepsABackup(t *testing.T) {
	lab, err := moduleRoot()
	require.NoError(t, err)
	root := fakeLab(t)
	c, _ := checker.Find(1)
	// The fake lab needs the shipped copy, and a student's edited case.
	copyShipped(t, lab, root, c)
	mine := filepath.Join(root, "cases", c.Dir())
	require.NoError(t, os.MkdirAll(mine, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(mine, "shop.go"), []byte("package case01\n// my work\n"), 0o644))

	code, out, _ := runShop(t, "reset", "1")
	require.Equal(t, exitPass, code, out)
	same, err := checker.Pristine(root, c)
	require.NoError(t, err)
	assert.True(t, same, "cases/case01 is as shipped")
	got, err := os.ReadFile(filepath.Join(mine, "shop.go"))
	require.NoError(t, err)
	assert.Contains(t, string(got), "\npackage case01\n")
	backups, _ := filepath.Glob(filepath.Join(root, backupDir, "case01-*", "shop.go"))
	require.Len(t, backups, 1)
	kept, _ := os.ReadFile(backups[0])
	assert.Equal(t, "package case01\n// my work\n", string(kept))
}

func TestResetOfAnUnchangedCaseKeepsNothing(t *testing.T) {
	lab, err := moduleRoot()
	require.NoError(t, err)
	root := fakeLab(t)
	c, _ := checker.Find(1)
	copyShipped(t, lab, root, c)
	require.NoError(t, writeCase(filepath.Join(root, "cases", c.Dir()), fromShipped(t, lab, c)))

	code, out, _ := runShop(t, "reset", "1")
	require.Equal(t, exitPass, code, out)
	assert.Contains(t, out, "already as the lab ships it")
	assert.NotContains(t, out, backupDir)
	assert.NoDirExists(t, filepath.Join(root, backupDir))
}

func TestHelpNamesEveryCommandAndFlag(t *testing.T) {
	code, out, _ := runShop(t, "help")
	require.Equal(t, exitPass, code)
	for _, want := range []string{"setup", "list", "run N", "check N", "watch", "hint N", "diff N", "reset N", "grade DIR",
		"--solution", "--timeline", "--redis", "--no-race", "--cases", "--repeat", "--json", "--verbose",
		"--stay", "--all", "--reset", "--only", "--csv", "--jobs"} {
		assert.Contains(t, out, want)
	}
}

// TestReadmeNamesEveryExitStatus keeps the README's table of exit statuses,
// which scripts read, in step with the command's.
func TestReadmeNamesEveryExitStatus(t *testing.T) {
	root, err := moduleRoot()
	require.NoError(t, err)
	data, err := os.ReadFile(filepath.Join(root, "README.md"))
	require.NoError(t, err)
	for _, code := range []int{exitPass, exitFail, exitUsage, exitIncomplete, exitStop} {
		assert.Contains(t, string(data), fmt.Sprintf("\n| %d | ", code), "the README says what status %d means", code)
	}
	assert.Contains(t, string(data), "go build -o bin/shop ./shop")
}
