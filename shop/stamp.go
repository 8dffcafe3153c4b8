package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// stampFile records what prepare last compiled, so that a warm command
// need not ask go build again: a go build that finds everything compiled
// still takes some 0.3 s, a third of the time to the first FAIL of a
// Redis case. It lives in the lab's folder and git ignores it.
const stampFile = ".lab-compiled.json"

// stampLife is how long a stamp is believed: go trims from its cache what
// has not been used for five days, and a stamp older than a day sends
// prepare to go build again, which says what it compiles.
const stampLife = 24 * time.Hour

// stamp is the state of everything prepare compiled: the toolchain and
// its settings, and each Go file of the lab's packages it compiled (the
// student's cases are not among them: the grader compiles those on its
// own build, each time).
type stamp struct {
	Env   string            `json:"env"` // what go env said of the settings that change a build
	Race  bool              `json:"race"`
	Made  time.Time         `json:"made"`
	Pkgs  []string          `json:"pkgs"`  // the packages asked for, as prepare named them
	Dirs  map[string]string `json:"dirs"`  // each package folder, below the root -> its Go files' names
	Files map[string]string `json:"files"` // each Go file, go.mod and go.sum -> size and modification time
}

// buildEnv is what go env says of the settings that change what go build
// makes: the toolchain, the platform, cgo and its compiler, the flags.
func buildEnv(ctx context.Context, root string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "env", "GOVERSION", "GOOS", "GOARCH", "GOAMD64", "GOARM64",
		"GOEXPERIMENT", "GOFLAGS", "CGO_ENABLED", "CC", "CGO_CFLAGS", "GOCACHE")
	cmd.Dir = root
	out, err := cmd.Output()
	return string(out), err
}

// compiledAlready reports whether the stamp says that prepare compiled
// pkgs, with race as asked, with the settings and files as they are now.
// Any doubt (no stamp, another toolchain, a file changed, added or gone, a
// stamp older than stampLife) is a no: prepare then runs go build.
func compiledAlready(ctx context.Context, root string, race bool, pkgs []string) bool {
	st, ok := readStamp(ctx, root, race)
	if !ok {
		return false
	}
	for _, p := range pkgs {
		if !slices.Contains(st.Pkgs, p) {
			return false
		}
	}
	return true
}

// readStamp reads the stamp, and reports whether it still holds: the same
// toolchain and settings, race as asked, every file as it was.
func readStamp(ctx context.Context, root string, race bool) (stamp, bool) {
	var st stamp
	data, err := os.ReadFile(filepath.Join(root, stampFile))
	if err != nil || json.Unmarshal(data, &st) != nil {
		return st, false
	}
	if st.Race != race || time.Since(st.Made) > stampLife || time.Until(st.Made) > time.Minute {
		return st, false
	}
	for dir, names := range st.Dirs {
		if goFiles(filepath.Join(root, filepath.FromSlash(dir))) != names {
			return st, false
		}
	}
	for file, was := range st.Files {
		if fileState(filepath.Join(root, filepath.FromSlash(file))) != was {
			return st, false
		}
	}
	env, err := buildEnv(ctx, root)
	return st, err == nil && env == st.Env
}

// writeStamp records, after prepare compiled pkgs, the state that
// compiledAlready will compare with, keeping what a stamp that still
// holds says of other packages. It asks go list which of the lab's
// folders the packages are built from. A stamp that cannot be written
// costs the next command a go build, nothing more.
func writeStamp(ctx context.Context, root string, race bool, pkgs []string) {
	st, ok := readStamp(ctx, root, race)
	if !ok {
		st = stamp{Dirs: map[string]string{}, Files: map[string]string{}}
	}
	env, err := buildEnv(ctx, root)
	if err != nil {
		return
	}
	st.Env, st.Race, st.Made = env, race, time.Now()
	args := append([]string{"list", "-deps", "-f", "{{if not .Standard}}{{.Dir}}{{end}}"}, pkgs...)
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return
	}
	for _, dir := range strings.Fields(string(out)) {
		rel, err := filepath.Rel(root, dir)
		if err != nil || strings.HasPrefix(rel, "..") {
			continue // a module's package, fixed by go.sum
		}
		names := goFiles(dir)
		st.Dirs[filepath.ToSlash(rel)] = names
		for _, name := range strings.Split(names, "\n") {
			if name != "" {
				st.Files[filepath.ToSlash(filepath.Join(rel, name))] = fileState(filepath.Join(dir, name))
			}
		}
	}
	for _, f := range []string{"go.mod", "go.sum"} {
		st.Files[f] = fileState(filepath.Join(root, f))
	}
	for _, p := range pkgs {
		if !slices.Contains(st.Pkgs, p) {
			st.Pkgs = append(st.Pkgs, p)
		}
	}
	data, err := jsonIndent(st)
	if err != nil {
		return
	}
	_ = os.WriteFile(filepath.Join(root, stampFile), data, 0o644)
}

// jsonIndent is the stamp as its file holds it.
func jsonIndent(st stamp) ([]byte, error) {
	data, err := json.MarshalIndent(st, "", "  ")
	return append(data, '\n'), err
}

// goFiles lists the Go files of dir that go build reads (not the tests),
// one name a line.
func goFiles(dir string) string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return ""
	}
	var b bytes.Buffer
	for _, e := range entries {
		if name := e.Name(); !e.IsDir() && strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go") {
			b.WriteString(name + "\n")
		}
	}
	return b.String()
}

// fileState is a file's size and modification time, which any save changes.
func fileState(path string) string {
	info, err := os.Stat(path)
	if err != nil {
		return "missing"
	}
	return fmt.Sprintf("%d bytes, %s", info.Size(), info.ModTime().UTC().Format(time.RFC3339Nano))
}
