package checker

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"

	"stampede/checker/check"
)

// Shipped returns the directory, relative to the module root, of the copy
// of case c as the lab ships it: checker/library/caseNN/shipped.
func Shipped(c check.Case) string {
	return filepath.Join("checker", "library", c.Dir(), "shipped")
}

// Pristine reports whether cases/caseNN below root is still as the lab
// ships it: the same Go files, with the same text but for the package
// clause.
func Pristine(root string, c check.Case) (bool, error) {
	shipped, err := GoFiles(filepath.Join(root, Shipped(c)))
	if err != nil {
		return false, err
	}
	student, err := GoFiles(filepath.Join(root, "cases", c.Dir()))
	if err != nil {
		return false, err
	}
	return maps.Equal(shipped, student), nil
}

// GoFiles reads the Go files of a package directory, keyed by file name,
// without their package clause.
func GoFiles(dir string) (map[string]string, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("no Go files in %s", dir)
	}
	files := make(map[string]string, len(names))
	for _, name := range names {
		data, err := os.ReadFile(name)
		if err != nil {
			return nil, err
		}
		var kept []string
		for _, line := range strings.Split(string(data), "\n") {
			if !strings.HasPrefix(line, "package ") {
				kept = append(kept, line)
			}
		}
		files[filepath.Base(name)] = strings.Join(kept, "\n")
	}
	return files, nil
}
