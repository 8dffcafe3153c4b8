//go:build linux

package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStoppedMidCheckLeavesNothing sends SIGTERM (what `timeout` and a
// cancelled CI job send) to `shop check` while its workers run: the command
// must stop them, remove its temporary folders, print no report, and exit
// with status 130.
func TestStoppedMidCheckLeavesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command and a worker")
	}
	tmp := t.TempDir()
	bin := filepath.Join(t.TempDir(), "shop")
	build := exec.Command("go", "build", "-o", bin, ".")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)

	root, err := filepath.Abs("..")
	require.NoError(t, err)
	cmd := exec.Command(bin, "check", "1", "--solution", "--json", "--repeat", "50")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	var stdout strings.Builder
	cmd.Stdout = &stdout
	require.NoError(t, cmd.Start())

	// Wait for a worker to be running a check, then stop the command.
	deadline := time.Now().Add(5 * time.Minute)
	for len(runningFrom(tmp)) == 0 {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("no worker started within 5 minutes")
		}
		time.Sleep(20 * time.Millisecond)
	}
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	err = cmd.Wait()
	var exit *exec.ExitError
	require.True(t, errors.As(err, &exit), "the command exited 0 after SIGTERM")
	assert.Equal(t, exitStop, exit.ExitCode())
	assert.Empty(t, stdout.String(), "a stopped grader printed a report")

	assert.Empty(t, runningFrom(tmp), "a worker outlived the command")
	left, _ := os.ReadDir(tmp)
	var names []string
	for _, e := range left {
		names = append(names, e.Name())
	}
	assert.Empty(t, names, "the command left files in the temporary folder")
}

// runningFrom lists the processes whose program lies below dir.
func runningFrom(dir string) []string {
	exes, _ := filepath.Glob("/proc/[0-9]*/exe")
	var found []string
	for _, e := range exes {
		if target, err := os.Readlink(e); err == nil && strings.HasPrefix(target, dir+string(filepath.Separator)) {
			found = append(found, target)
		}
	}
	return found
}
