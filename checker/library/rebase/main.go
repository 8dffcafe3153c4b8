// Command rebase carries the library's wrong entries to their base's new
// version, after a reference solution or a shipped case has changed:
//
//	go run ./checker/library/rebase -from REV BASE
//
// BASE is a base's folder below the module root ("solutions/case09"), and
// REV the git revision its entries were written against (HEAD, before the
// change is committed). For each entry written on BASE (every
// checker/library/caseNN/*/NAME.patch whose "base:" is BASE) it rebuilds
// the entry's files from the base as it was at REV, merges the base's
// change into them (git merge-file: the entry's own change stays, the
// base's comes in around it), and writes the entry again as its change to
// the base as it is now. An entry whose change and the base's touch the
// same lines is left as it was and named: write it again by hand, with its
// own mistake and nothing else. Run it from the module root.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"stampede/checker/library/patch"
)

// ours is -ours: a conflict keeps the entry's side.
var ours bool

func main() {
	from := flag.String("from", "HEAD", "the git revision the entries were written against")
	flag.BoolVar(&ours, "ours", false, "where the entry and the base change the same lines, keep the entry's")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: go run ./checker/library/rebase -from REV BASE (such as solutions/case09)")
		os.Exit(2)
	}
	base := filepath.ToSlash(filepath.Clean(flag.Arg(0)))
	conflicts, err := rebaseAll(*from, base)
	if err != nil {
		fmt.Fprintln(os.Stderr, "rebase:", err)
		os.Exit(1)
	}
	if len(conflicts) > 0 {
		fmt.Fprintf(os.Stderr, "rebase: %d entries conflict with the base's change, left as they were:\n  %s\n",
			len(conflicts), strings.Join(conflicts, "\n  "))
		os.Exit(1)
	}
}

// rebaseAll rebases every entry written on base, and returns the entries
// that conflict.
func rebaseAll(from, base string) ([]string, error) {
	files, _ := filepath.Glob("checker/library/case*/*/*.patch")
	old, err := filesAt(from, base)
	if err != nil {
		return nil, err
	}
	now, err := filesIn(base)
	if err != nil {
		return nil, err
	}
	var conflicts []string
	done := 0
	for _, f := range files {
		e, err := patch.Read(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		if e.Base != base {
			continue
		}
		ok, err := rebase(f, e, old, now)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		if !ok {
			conflicts = append(conflicts, f)
		}
		done++
	}
	fmt.Printf("rebase: %d entries on %s, %d carried over\n", done, base, done-len(conflicts))
	return conflicts, nil
}

// rebase carries one entry from old to now; false when it conflicts.
func rebase(path string, e *patch.Entry, old, now map[string]string) (bool, error) {
	mine, err := e.Apply(old)
	if err != nil {
		return false, fmt.Errorf("does not apply to the base at the revision given: %w", err)
	}
	merged := map[string]string{}
	for name, text := range mine {
		was, inOld := old[name]
		is, inNow := now[name]
		switch {
		case !inOld: // the entry's own file
			merged[name] = text
		case !inNow:
			return false, fmt.Errorf("the base no longer has %s", name)
		default:
			if ours && conflicted(text, was, is) {
				fmt.Printf("rebase: %s: kept the entry's side where it and the base changed the same lines of %s\n", path, name)
			}
			m, clean, err := merge(text, was, is)
			if err != nil {
				return false, err
			}
			if !clean {
				return false, nil
			}
			merged[name] = m
		}
	}
	for name, text := range now {
		if _, ok := old[name]; !ok {
			merged[name] = text // a file new in the base
		}
	}
	var diff strings.Builder
	names := make([]string, 0, len(now)+len(merged))
	for n := range now {
		names = append(names, n)
	}
	for n := range merged {
		if _, ok := now[n]; !ok {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	for _, n := range names {
		d, err := unified(n, now[n], merged[n], now, merged)
		if err != nil {
			return false, err
		}
		diff.WriteString(d)
	}
	text := strings.TrimRight(e.Mistake, "\n") + "\n\nbase: " + e.Base + "\n" + diff.String()
	return true, os.WriteFile(path, []byte(text), 0o644)
}

// merge merges the change from was to is into mine: git merge-file's
// three-way merge. clean is false when the two changes touch the same
// lines.
func merge(mine, was, is string) (string, bool, error) {
	dir, err := os.MkdirTemp("", "rebase-")
	if err != nil {
		return "", false, err
	}
	defer os.RemoveAll(dir)
	paths := []string{filepath.Join(dir, "mine"), filepath.Join(dir, "was"), filepath.Join(dir, "is")}
	for i, text := range []string{mine, was, is} {
		if err := os.WriteFile(paths[i], []byte(text), 0o644); err != nil {
			return "", false, err
		}
	}
	args := []string{"merge-file", "-p"}
	if ours {
		args = append(args, "--ours")
	}
	out, err := exec.Command("git", append(args, paths...)...).Output()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return string(out), true, nil
	case errors.As(err, &ee) && ee.ExitCode() > 0 && ee.ExitCode() < 128:
		return "", false, nil // that many conflicts
	}
	return "", false, fmt.Errorf("git merge-file: %w", err)
}

// conflicted reports whether merging was to is into mine meets a conflict.
func conflicted(mine, was, is string) bool {
	saved := ours
	ours = false
	defer func() { ours = saved }()
	_, clean, err := merge(mine, was, is)
	return err == nil && !clean
}

// unified is diff -u of one file from the base to the entry, with the
// file's own name on both sides ("" and absent mean /dev/null).
func unified(name, from, to string, fromSet, toSet map[string]string) (string, error) {
	_, inFrom := fromSet[name]
	_, inTo := toSet[name]
	if inFrom && inTo && from == to {
		return "", nil
	}
	dir, err := os.MkdirTemp("", "rebase-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	if err := os.WriteFile(a, []byte(from), 0o644); err != nil {
		return "", err
	}
	if err := os.WriteFile(b, []byte(to), 0o644); err != nil {
		return "", err
	}
	la, lb := name, name
	if !inFrom {
		la = "/dev/null"
	}
	if !inTo {
		lb = "/dev/null"
	}
	out, err := exec.Command("diff", "-u", "--label", la, "--label", lb, a, b).Output()
	var ee *exec.ExitError
	if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 1) {
		return "", fmt.Errorf("diff: %w", err)
	}
	return string(bytes.ReplaceAll(out, []byte("\r"), nil)), nil
}

// filesAt returns the Go files of dir at git revision rev, by name.
func filesAt(rev, dir string) (map[string]string, error) {
	out, err := exec.Command("git", "ls-tree", "--name-only", rev+":"+dir).Output()
	if err != nil {
		return nil, fmt.Errorf("listing %s at %s: %w", dir, rev, err)
	}
	files := map[string]string{}
	for _, n := range strings.Fields(string(out)) {
		if !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		text, err := exec.Command("git", "show", rev+":"+dir+"/"+n).Output()
		if err != nil {
			return nil, fmt.Errorf("reading %s/%s at %s: %w", dir, n, rev, err)
		}
		files[n] = string(text)
	}
	return files, nil
}

// filesIn returns the Go files of dir as they are, by name.
func filesIn(dir string) (map[string]string, error) {
	names, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	files := map[string]string{}
	for _, n := range names {
		if strings.HasSuffix(n, "_test.go") {
			continue
		}
		text, err := os.ReadFile(n)
		if err != nil {
			return nil, err
		}
		files[filepath.Base(n)] = string(text)
	}
	return files, nil
}
