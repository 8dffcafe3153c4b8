package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"stampede/checker"
	"stampede/checker/check"
)

// The command's tests grade fixtures built from the lab's shipped copies
// (checker/library/caseNN/shipped) and reference solutions, never the lab's
// own cases/: on a student's clone that folder holds their work, and
// `make test` must stay green however much of it is solved.

// files is a package's Go files by name.
type files map[string]string

// fromShipped returns case c as the lab ships it, with the package clause
// a student's cases/caseNN has.
func fromShipped(t *testing.T, lab string, c check.Case) files {
	t.Helper()
	raw, err := checker.GoFiles(filepath.Join(lab, checker.Shipped(c)))
	require.NoError(t, err)
	out := files{}
	for name, body := range raw {
		out[name] = restorePackage(body, c.Dir())
	}
	return out
}

// fromSolution returns the reference solution of case c.
func fromSolution(t *testing.T, lab string, c check.Case) files {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(lab, "solutions", c.Dir(), "*.go"))
	require.NoError(t, err)
	require.NotEmpty(t, names)
	out := files{}
	for _, n := range names {
		data, err := os.ReadFile(n)
		require.NoError(t, err)
		out[filepath.Base(n)] = string(data)
	}
	return out
}

func writeCase(dir string, fs files) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, body := range fs {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// copyShipped puts the lab's shipped copy of case c into the fake lab at
// root, where Pristine and reset look for it.
func copyShipped(t *testing.T, lab, root string, c check.Case) {
	t.Helper()
	dst := filepath.Join(root, checker.Shipped(c))
	require.NoError(t, os.MkdirAll(dst, 0o755))
	names, err := filepath.Glob(filepath.Join(lab, checker.Shipped(c), "*.go"))
	require.NoError(t, err)
	for _, n := range names {
		data, err := os.ReadFile(n)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dst, filepath.Base(n)), data, 0o644))
	}
}

// submissionDir makes a student's submission named name in a fresh folder:
// cases/caseNN for each of the numbered cases (every case when none is
// given), filled by from. It returns the submission's folder.
func submissionDir(t *testing.T, name string, from func(*testing.T, string, check.Case) files, numbers ...int) string {
	t.Helper()
	lab, err := moduleRoot()
	require.NoError(t, err)
	dir := filepath.Join(t.TempDir(), name)
	cases := checker.Cases()
	if len(numbers) > 0 {
		cases = nil
		for _, n := range numbers {
			c, ok := checker.Find(n)
			require.True(t, ok)
			cases = append(cases, c)
		}
	}
	for _, c := range cases {
		require.NoError(t, writeCase(filepath.Join(dir, "cases", c.Dir()), from(t, lab, c)))
	}
	return dir
}
