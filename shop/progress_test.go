package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestProgressIsPlainLinesWhenNotATerminal(t *testing.T) {
	var out bytes.Buffer
	p := newProgress(&out)
	require.False(t, p.tty)
	p.Line("compiling")
	p.Status("redrawn on a terminal only")
	p.Step(1, 2, "alice: case 1")
	p.Step(2, 2, "bob: case 1")
	p.Clear()
	assert.Equal(t, "compiling\n[1/2] alice: case 1\n[2/2] bob: case 1\n", out.String())
	assert.NotContains(t, out.String(), "\r")
}

func TestProgressRedrawsOneLineOnATerminal(t *testing.T) {
	var out bytes.Buffer
	p := &progress{w: &out, tty: true}
	p.Step(1, 4, "a")
	p.Line("stays")
	assert.Equal(t, "\r\x1b[K[######..................] 1/4 a\r\x1b[Kstays\n", out.String())
	assert.Equal(t, "[....]", bar(0, 3, 4))
	assert.Equal(t, "[####]", bar(3, 3, 4))
}

// TestACompileSaysWhatItDoesAndAWarmOneIsSilent compiles a small module of
// two packages that import nothing into an empty build cache: the first
// time says so, line by line, and the second, with everything cached,
// prints nothing.
func TestACompileSaysWhatItDoesAndAWarmOneIsSilent(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	mod := t.TempDir()
	for name, body := range map[string]string{
		"go.mod": "module tiny\n\ngo 1.25\n",
		"a/a.go": "package a\n\n// A is a.\nconst A = 1\n",
		"b/b.go": "package b\n\nimport \"tiny/a\"\n\n// B is b.\nconst B = a.A + 1\n",
	} {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(mod, name)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(mod, name), []byte(body), 0o644))
	}
	t.Setenv("GOCACHE", t.TempDir())
	t.Setenv("GOFLAGS", "-mod=mod")
	var out bytes.Buffer
	_, err := compileWithProgress(context.Background(), mod, false, []string{"./a", "./b"}, "compiling the test", newProgress(&out))
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	assert.Equal(t, "compiling the test", lines[0])
	assert.Regexp(t, `^  compiled 2 packages in \S+$`, lines[len(lines)-1])

	out.Reset()
	_, err = compileWithProgress(context.Background(), mod, false, []string{"./a", "./b"}, "compiling the test", newProgress(&out))
	require.NoError(t, err)
	assert.Empty(t, out.String(), "a warm compile says nothing")
}

func TestAnUnreachableRedisIsOneSetUpError(t *testing.T) {
	code, out, stderr := runShop(t, "check", "6", "--redis", "redis://127.0.0.1:1/0")
	assert.Equal(t, exitFail, code)
	assert.Empty(t, out, "no checks were run")
	assert.Equal(t, 1, strings.Count(stderr, "\n"), stderr)
	assert.Contains(t, stderr, "cannot reach Redis at 127.0.0.1:1")

	code, _, stderr = runShop(t, "check", "6", "--redis", "localhost:6379")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "is not a Redis URL")
}

func TestCountsAgreeWithTheirNumber(t *testing.T) {
	assert.Equal(t, "1 package", plural(1, "package"))
	assert.Equal(t, "0 packages", plural(0, "package"))
	assert.Equal(t, "85 packages", plural(85, "package"))
}

// TestSetupCountsGoRunsOwnCompile: setup's time includes the minute go run
// may spend compiling the command before it starts, or says it does not.
func TestSetupCountsGoRunsOwnCompile(t *testing.T) {
	start := time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)
	end := start.Add(2 * time.Second)
	goRun := func() (time.Time, bool) { return start.Add(-58 * time.Second), true }
	assert.Equal(t, "1m0s in all: 58s for go run to compile the command, 2s for the rest", setupTook(goRun, start, end))
	unknown := func() (time.Time, bool) { return time.Time{}, false }
	assert.Equal(t, "in 2s, after go run compiled the command", setupTook(unknown, start, end))

	// Under go test, this process's parent is the go command.
	if began, ok := goRunStart(); ok {
		assert.False(t, began.After(time.Now()))
		assert.Less(t, time.Since(began), time.Hour)
	}
}
