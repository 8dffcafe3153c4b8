package main

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"testing"

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

// TestACompileSaysWhatItDoesAndAWarmOneIsSilent compiles a small package
// of the lab into an empty build cache: the first time says so, line by
// line, and the second, with everything cached, prints nothing.
func TestACompileSaysWhatItDoesAndAWarmOneIsSilent(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles part of the standard library")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	root, err := moduleRoot()
	require.NoError(t, err)
	t.Setenv("GOCACHE", t.TempDir())
	t.Setenv("CGO_ENABLED", "0")
	var out bytes.Buffer
	_, err = compileWithProgress(context.Background(), root, false, []string{"./checker/check"}, "compiling the test", newProgress(&out))
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	assert.Equal(t, "compiling the test", lines[0])
	assert.Regexp(t, `^  compiled \d+ packages in `, lines[len(lines)-1])

	out.Reset()
	_, err = compileWithProgress(context.Background(), root, false, []string{"./checker/check"}, "compiling the test", newProgress(&out))
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
