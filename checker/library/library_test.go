package library

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"stampede/checker"
	"stampede/checker/check"
	"stampede/checker/grade"
)

// entry is one answer of the library and the verdict it must get.
type entry struct {
	dir   string            // below checker/library/caseNN
	fails []string          // the checks it must fail, every run
	maybe map[string]string // checks whose verdict depends on the schedule, and why
}

// entries holds each case's library, filled by the caseNN_test.go files.
var entries = map[int][]entry{}

// register adds a case's library to entries.
func register(n int, es ...entry) bool {
	entries[n] = append(entries[n], es...)
	return true
}

// repeat is how many times each check runs per entry: a verdict that
// holds in every run, not once by luck.
const repeat = 3

func root(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("../..")
	require.NoError(t, err)
	require.FileExists(t, filepath.Join(dir, "go.mod"))
	return dir
}

// TestVerdicts grades every entry of the library and holds each check to
// the verdict written beside the entry: FAIL where listed, PASS elsewhere.
func TestVerdicts(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a worker per entry")
	}
	r := root(t)
	for _, c := range checker.Cases() {
		for _, e := range entries[c.Number] {
			t.Run(fmt.Sprintf("case%02d/%s", c.Number, e.dir), func(t *testing.T) {
				t.Parallel()
				target := grade.Target{Case: c, Pkg: fmt.Sprintf("%s/checker/library/%s/%s", check.Module, c.Dir(), e.dir)}
				expect(t, r, target, e)
			})
		}
	}
}

// TestSolutions grades every reference solution: each must pass every check.
func TestSolutions(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a worker per case")
	}
	r := root(t)
	for _, c := range checker.Cases() {
		t.Run(c.Dir(), func(t *testing.T) {
			t.Parallel()
			expect(t, r, grade.Solution(c), entry{})
		})
	}
}

func expect(t *testing.T, root string, target grade.Target, e entry) {
	t.Helper()
	rep, err := grade.Grade(context.Background(), target, grade.Options{Root: root, Repeat: repeat})
	require.NoError(t, err)
	require.Nil(t, rep.Build, "%s does not compile", target.Dir())
	require.Empty(t, rep.NoRace, "the library is proved with the race detector")
	for _, res := range rep.Results {
		if _, ok := e.maybe[res.ID]; ok {
			t.Logf("maybe %s: %s", res.ID, res.Status) // what it was this time, for the table's reader
			continue
		}
		want := check.Pass
		if slices.Contains(e.fails, res.ID) {
			want = check.Fail
		}
		assert.Equal(t, want, res.Status, "check %q (%s): %s %s", res.ID, res.Figure, res.Name, res.Message)
	}
}

// TestEveryCheckCanFail holds the library to its purpose: every check of
// every case is failed by at least one known-wrong entry. A check that
// nothing fails has not been shown to catch anything.
func TestEveryCheckCanFail(t *testing.T) {
	for _, c := range checker.Cases() {
		for _, in := range c.Checks {
			caught := false
			for _, e := range entries[c.Number] {
				caught = caught || slices.Contains(e.fails, in.ID)
			}
			assert.True(t, caught, "case %d: no known-wrong entry fails %q (%s)", c.Number, in.ID, in.Name)
			assert.NotEmpty(t, in.Catches, "case %d: check %q does not name the wrong answer it catches", c.Number, in.ID)
		}
		assert.NotEmpty(t, entries[c.Number], "case %d has no library", c.Number)
	}
}

// TestEntriesNameRealChecks catches a typo in the table, which would
// otherwise quietly expect nothing.
func TestEntriesNameRealChecks(t *testing.T) {
	for _, c := range checker.Cases() {
		for _, e := range entries[c.Number] {
			for _, id := range e.fails {
				_, ok := c.Check(id)
				assert.True(t, ok, "case %d, %s: no check %q", c.Number, e.dir, id)
			}
			for id := range e.maybe {
				_, ok := c.Check(id)
				assert.True(t, ok, "case %d, %s: no check %q", c.Number, e.dir, id)
			}
			assert.DirExists(t, filepath.Join(c.Dir(), e.dir))
		}
	}
}

// TestShippedInStep keeps each shipped/ entry identical to cases/ as the
// lab ships them, so that the verdict proved on shipped/ is the verdict a
// student sees. On a student's clone cases/ holds their work, so a
// difference is only an error in CI.
func TestShippedInStep(t *testing.T) {
	r := root(t)
	for _, c := range checker.Cases() {
		t.Run(c.Dir(), func(t *testing.T) {
			same, err := checker.Pristine(r, c)
			require.NoError(t, err)
			if !same {
				if os.Getenv("CI") != "" {
					t.Errorf("cases/%s differs from %s: change both together", c.Dir(), checker.Shipped(c))
				} else {
					t.Skipf("cases/%s differs from what the lab ships (your work, or a change to carry to %s)", c.Dir(), checker.Shipped(c))
				}
			}
		})
	}
}
