package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"stampede/checker"
)

// backupDir is where reset keeps the code it replaces; git ignores it.
const backupDir = ".lab-backup"

// resetCmd puts a case back as the lab ships it. The student's files are
// kept in .lab-backup first, so that nothing is lost by a slip.
func resetCmd(_ context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("reset", flag.ContinueOnError)
	rest, err := parse(fs, args, false)
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		return usagef("reset takes one case number, such as: go run ./shop reset 1")
	}
	c, err := caseArg(rest[0])
	if err != nil {
		return err
	}
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	if same, err := checker.Pristine(root, c); err == nil && same {
		fmt.Fprintf(stdout, "cases/%s is already as the lab ships it: nothing to do.\n", c.Dir())
		return nil
	}
	shipped, err := checker.GoFiles(filepath.Join(root, checker.Shipped(c)))
	if err != nil {
		return err
	}
	dir := filepath.Join(root, "cases", c.Dir())
	old, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	if len(old) > 0 {
		backup := filepath.Join(root, backupDir, c.Dir()+"-"+time.Now().Format("20060102-150405"))
		if err := os.MkdirAll(backup, 0o755); err != nil {
			return err
		}
		for _, f := range old {
			if err := os.Rename(f, filepath.Join(backup, filepath.Base(f))); err != nil {
				return err
			}
		}
		fmt.Fprintf(stdout, "Your files are kept in %s.\n", strings.TrimPrefix(backup, root+string(filepath.Separator)))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, body := range shipped {
		// GoFiles drops the package clause; the shipped files start with
		// their doc comment, so the clause goes back where it stood.
		text := restorePackage(body, c.Dir())
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, "cases/%s is as the lab ships it again.\n", c.Dir())
	return nil
}

// restorePackage puts "package name" back after the file's leading
// comment, where GoFiles took it from.
func restorePackage(body, name string) string {
	lines := strings.Split(body, "\n")
	i := 0
	for i < len(lines) && strings.HasPrefix(lines[i], "//") {
		i++
	}
	out := append([]string{}, lines[:i]...)
	out = append(out, "package "+name)
	return strings.Join(append(out, lines[i:]...), "\n")
}
