package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
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

var update = flag.Bool("update", false, "rewrite the saved JSON report")

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
	code, out, _ := runShop(t, "check", "1", "--repeat", "1")
	assert.Equal(t, exitFail, code)
	assert.Contains(t, out, "  FAIL  the query runs once, not once per visitor (ran 50)")
	assert.Contains(t, out, "  PASS  no data race")
	assert.Contains(t, out, "\n3 passed, 2 failed\n")

	code, out, _ = runShop(t, "check", "1", "--solution", "--repeat", "1")
	assert.Equal(t, exitPass, code, out)
	assert.Contains(t, out, "\n5 passed, 0 failed\n")
}

func TestCheckJSONIsOneDocument(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the worker")
	}
	code, out, _ := runShop(t, "check", "1", "--json", "--repeat", "1")
	assert.Equal(t, exitFail, code)
	var doc Document
	require.NoError(t, json.Unmarshal([]byte(out), &doc), out)
	assert.Equal(t, Schema, doc.Schema)
	require.Len(t, doc.Cases, 1)
	assert.Equal(t, 3, doc.Score.Points)
	assert.Equal(t, 5, doc.Score.MaxPoints)
	assert.Equal(t, "once", doc.Cases[0].Checks[1].ID)
	assert.Equal(t, check.Fail, doc.Cases[0].Checks[1].Status)
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
	}
	var got bytes.Buffer
	require.NoError(t, writeJSON(&got, document("cases", reps, false)))
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
		grade: func(_ context.Context, c check.Case) (grade.Report, error) {
			grades = append(grades, c.Number)
			ok := passes[c.Number][0]
			passes[c.Number] = passes[c.Number][1:]
			st := check.Fail
			if ok {
				st = check.Pass
			}
			return grade.Report{Target: grade.Target{Case: c}, Results: []check.Result{{ID: "x", Name: "x", Status: st}}}, nil
		},
		snapshot: func() (string, error) {
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

func TestWatchStopsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	w := watcher{
		out:   &bytes.Buffer{},
		cases: []check.Case{{Number: 1}},
		grade: func(context.Context, check.Case) (grade.Report, error) {
			return grade.Report{Results: []check.Result{{Status: check.Fail}}}, nil
		},
		snapshot: func() (string, error) { return "same", nil },
		sleep: func(ctx context.Context, d time.Duration) error {
			cancel()
			return sleepCtx(ctx, d)
		},
	}
	assert.ErrorIs(t, w.run(ctx, 0), context.Canceled)
}

func TestSnapshotChangesWhenAFileIsSaved(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "shop.go")
	require.NoError(t, os.WriteFile(file, []byte("a"), 0o644))
	before, err := snapshot(dir)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(file, []byte("ab"), 0o644))
	after, err := snapshot(dir)
	require.NoError(t, err)
	assert.NotEqual(t, before, after)
}

func TestListShowsShippedCasesAsNotStarted(t *testing.T) {
	if os.Getenv("CI") == "" {
		t.Skip("on a student's clone, cases/ holds their work")
	}
	root, err := moduleRoot()
	require.NoError(t, err)
	for _, c := range checker.Cases() {
		st, err := statusOf(context.Background(), root, c)
		require.NoError(t, err)
		assert.Equal(t, NotStarted, st, "case %d", c.Number)
	}
}

func TestResetRestoresTheShippedCaseAndKeepsABackup(t *testing.T) {
	lab, err := moduleRoot()
	require.NoError(t, err)
	root := fakeLab(t)
	c, _ := checker.Find(1)
	// The fake lab needs the shipped copy, and a student's edited case.
	shipped := filepath.Join(root, checker.Shipped(c))
	require.NoError(t, os.MkdirAll(shipped, 0o755))
	data, err := os.ReadFile(filepath.Join(lab, checker.Shipped(c), "shop.go"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(shipped, "shop.go"), data, 0o644))
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
