package checker

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// skeleton runs TestTheSkeletonIsACase: half a minute of the processors'
// time on a fresh clone, which make test leaves to make proof
// (TestANewCaseIsOneRegistryEntry proves the registry's half in make test).
var skeleton = flag.Bool("skeleton", false, "lay out, register and grade a case from docs/new-case")

// TestTheSkeletonIsACase lays out a case 12 from docs/new-case in a copy
// of the lab, as a maintainer would (new.sh, then the one registry entry,
// then the texts written from the registry), and holds the result to
// what the lab asks of a case: it builds and vets, the registry's tests
// pass, and the grader grades it, the solution passing every check and
// the shipped code failing the stampede.
func TestTheSkeletonIsACase(t *testing.T) {
	if !*skeleton {
		t.Skip("copies the lab and grades a case: make proof runs it (-skeleton)")
	}
	lab := copyLab(t)
	run := func(name string, args ...string) string {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = lab
		cmd.Env = append(os.Environ(), "CI=")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s %s:\n%s", name, strings.Join(args, " "), out)
		return string(out)
	}
	run("docs/new-case/new.sh", "12", "skeleton", "The skeleton")

	// The one registry entry.
	path := filepath.Join(lab, "checker", "checker.go")
	src, err := os.ReadFile(path)
	require.NoError(t, err)
	src = bytes.Replace(src, []byte(`"stampede/checker/case11"`), []byte("\"stampede/checker/case11\"\n\t\"stampede/checker/case12\""), 1)
	src = bytes.Replace(src, []byte("\t\tcase11.Case,\n"), []byte("\t\tcase11.Case,\n\t\tcase12.Case,\n"), 1)
	require.NoError(t, os.WriteFile(path, src, 0o644))

	// Built as make test builds, so that a fresh clone compiles nothing
	// twice for this test.
	gotest := []string{"test", "-race", "-trimpath", "-count=1"}
	run("go", append(gotest, "./checker", "./shop", "-run", "TestGeneratedTexts|TestClassroomWorkflowIsWrittenFromTheRegistry", "-update")...)
	run("go", "vet", "-race", "-trimpath", "./cases/case12", "./solutions/case12", "./checker/case12", "./checker", "./shop")
	run("go", append(gotest, "./checker", "-run", "TestRegistry|TestGeneratedTexts|TestPointsSumTo100")...)

	out := run("go", "run", "./shop", "check", "12", "--solution", "--repeat", "1")
	assert.Contains(t, out, "4 passed, 0 failed", out)
	cmd := exec.Command("go", "run", "./shop", "check", "12", "--repeat", "1")
	cmd.Dir = lab
	shipped, _ := cmd.CombinedOutput()
	assert.Contains(t, string(shipped), "FAIL  the query runs once", string(shipped))
}

// copyLab copies the lab's files (what git tracks, or every file when git
// cannot say) to a folder of the test's, and returns it.
func copyLab(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	dst := t.TempDir()
	var files []string
	if out, err := exec.Command("git", "-C", root, "ls-files").Output(); err == nil && len(out) > 0 {
		files = strings.Fields(string(out))
	} else {
		require.NoError(t, filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				if d != nil && d.Name() == ".git" {
					return filepath.SkipDir
				}
				return err
			}
			rel, _ := filepath.Rel(root, p)
			files = append(files, rel)
			return nil
		}))
	}
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			continue // deleted in the working tree
		}
		info, err := os.Stat(filepath.Join(root, f))
		require.NoError(t, err)
		require.NoError(t, os.MkdirAll(filepath.Join(dst, filepath.Dir(f)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dst, f), data, info.Mode().Perm()))
	}
	return dst
}
