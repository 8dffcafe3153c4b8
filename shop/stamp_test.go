package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The stamp spares a warm command its go build only while nothing that
// build read has changed: a file of a package it compiled saved, added or
// removed, go.mod, the race detector asked or not, or a day gone by.
func TestStampHoldsUntilAFileItCompiledChanges(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		path := filepath.Join(root, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
	}
	write("go.mod", "module example\n\ngo 1.22\n")
	write("lib/lib.go", "package lib\n\nconst N = 1\n")
	write("cmd/cmd.go", "package main\n\nimport _ \"example/lib\"\n\nfunc main() {}\n")
	write("other/other.go", "package other\n")
	pkgs := []string{"./cmd"}

	assert.False(t, compiledAlready(ctx, root, true, pkgs), "no stamp yet")
	writeStamp(ctx, root, true, pkgs)
	require.True(t, compiledAlready(ctx, root, true, pkgs))
	assert.False(t, compiledAlready(ctx, root, false, pkgs), "compiled with the race detector, asked without")
	assert.False(t, compiledAlready(ctx, root, true, []string{"./cmd", "./other"}), "a package it did not compile")

	write("other/other.go", "package other\n\nconst M = 2\n")
	assert.True(t, compiledAlready(ctx, root, true, pkgs), "a package the build does not read")

	later := time.Now().Add(time.Second)
	write("lib/lib.go", "package lib\n\nconst N = 2\n")
	require.NoError(t, os.Chtimes(filepath.Join(root, "lib", "lib.go"), later, later))
	assert.False(t, compiledAlready(ctx, root, true, pkgs), "a dependency saved")

	writeStamp(ctx, root, true, pkgs)
	require.True(t, compiledAlready(ctx, root, true, pkgs))
	write("lib/more.go", "package lib\n")
	assert.False(t, compiledAlready(ctx, root, true, pkgs), "a file added to a dependency")
	require.NoError(t, os.Remove(filepath.Join(root, "lib", "more.go")))
	assert.True(t, compiledAlready(ctx, root, true, pkgs), "and taken away again")
	write("lib/lib_test.go", "package lib\n")
	assert.True(t, compiledAlready(ctx, root, true, pkgs), "a test file is not built")

	writeStamp(ctx, root, true, []string{"./other"})
	assert.True(t, compiledAlready(ctx, root, true, []string{"./cmd", "./other"}), "a second stamp keeps what the first said")

	write("go.mod", "module example\n\ngo 1.23\n")
	assert.False(t, compiledAlready(ctx, root, true, pkgs), "go.mod changed")

	writeStamp(ctx, root, true, pkgs)
	st, ok := readStamp(ctx, root, true)
	require.True(t, ok)
	st.Made = time.Now().Add(-stampLife - time.Minute)
	data, err := jsonIndent(st)
	require.NoError(t, err)
	write(stampFile, string(data))
	assert.False(t, compiledAlready(ctx, root, true, pkgs), "a stamp older than a day")
}
