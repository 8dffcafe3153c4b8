package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWhoIsGradedComesFromTheCIThenGit(t *testing.T) {
	ctx := context.Background()
	env := map[string]string{"GITHUB_ACTOR": "ada-l", "USER": "runner"}
	assert.Equal(t, Person{Name: "ada-l", Source: "GITHUB_ACTOR"}, whoIsHere(ctx, t.TempDir(), func(k string) string { return env[k] }))

	// Not a clone and no CI: git has nothing to say, so the account names
	// the student (unless a global git config does).
	delete(env, "GITHUB_ACTOR")
	p := whoIsHere(ctx, t.TempDir(), func(k string) string { return env[k] })
	assert.Contains(t, []string{"git config", "account"}, p.Source)
	if p.Source == "account" {
		assert.Equal(t, "runner", p.Name)
	}

	dir := filepath.Join(t.TempDir(), "carol")
	assert.Equal(t, Person{Name: "carol", Source: "folder name"}, whoSubmitted(ctx, t.TempDir(), dir))
	assert.Equal(t, "unknown", labOf(ctx, t.TempDir()).Commit)
}

// TestAStudentIsNamedByTheirOwnCommit: a clone the student has not
// committed to carries the lab's commits, whose author is not the student.
func TestAStudentIsNamedByTheirOwnCommit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	ctx := context.Background()
	gitIn := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=Lab Author", "-c", "user.email=lab@example.org"}, args...)...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, string(out))
	}
	lab := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(lab, "cases", "case01"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(lab, "cases", "case01", "shop.go"), []byte("package case01\n"), 0o644))
	gitIn(lab, "init", "-q")
	gitIn(lab, "add", ".")
	gitIn(lab, "commit", "-qm", "the lab")

	erin := filepath.Join(t.TempDir(), "erin")
	gitIn(lab, "clone", "-q", lab, erin)
	assert.Equal(t, Person{Name: "erin", Source: "folder name"}, whoSubmitted(ctx, lab, erin), "not committed yet")

	require.NoError(t, os.WriteFile(filepath.Join(erin, "cases", "case01", "shop.go"), []byte("package case01\n// mine\n"), 0o644))
	gitIn(erin, "-c", "user.name=Erin E", "-c", "user.email=erin@example.org", "commit", "-qam", "case 1")
	assert.Equal(t, Person{Name: "Erin E", Email: "erin@example.org", Source: "last commit"}, whoSubmitted(ctx, lab, erin))
}

// TestAFolderInsideAnotherCloneHasNoCommit: a submission copied into the
// grader's own checkout is not a clone, and must not be given the
// checkout's commit (or its last author) as its own.
func TestAFolderInsideAnotherCloneHasNoCommit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	ctx := context.Background()
	lab := t.TempDir()
	sub := filepath.Join(lab, "submissions", "fay")
	require.NoError(t, os.MkdirAll(filepath.Join(sub, "cases", "case01"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(sub, "cases", "case01", "shop.go"), []byte("package case01\n"), 0o644))
	for _, args := range [][]string{{"init", "-q"}, {"add", "."}, {"commit", "-qm", "the lab, with a submission inside"}} {
		cmd := exec.Command("git", append([]string{"-c", "user.name=Lab Author", "-c", "user.email=lab@example.org"}, args...)...)
		cmd.Dir = lab
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, string(out))
	}
	assert.Len(t, submissionOf(ctx, lab, ".").Commit, 40, "the lab is a clone")
	assert.Equal(t, Submission{Dir: "fay"}, submissionOf(ctx, sub, "fay"))
	assert.Equal(t, Person{Name: "fay", Source: "folder name"}, whoSubmitted(ctx, t.TempDir(), sub))
}
