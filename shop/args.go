package main

import (
	"flag"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"stampede/checker"
	"stampede/checker/check"
)

// parse reads flags wherever they stand among the arguments, so that
// `check 1 --solution` and `check --solution 1` both work, and returns the
// other arguments. With passThrough, unknown flags are returned among them
// (run hands them to the case's story) instead of being an error.
func parse(fs *flag.FlagSet, args []string, passThrough bool) ([]string, error) {
	fs.SetOutput(io.Discard)
	var flags, rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			rest = append(rest, args[i+1:]...)
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			rest = append(rest, a)
			continue
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		f := fs.Lookup(name)
		if f == nil {
			if !passThrough {
				return nil, usagef("unknown flag %s%s", a, didYouMean(name, flagNames(fs), "--"))
			}
			rest = append(rest, a)
			continue
		}
		flags = append(flags, a)
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); !hasValue && !(ok && b.IsBoolFlag()) && i+1 < len(args) {
			i++
			flags = append(flags, args[i])
		}
	}
	if err := fs.Parse(flags); err != nil {
		return nil, usagef("%v", err)
	}
	return rest, nil
}

// caseArg reads a case number.
func caseArg(s string) (check.Case, error) {
	n, err := strconv.Atoi(strings.TrimPrefix(strings.ToLower(s), "case"))
	if err != nil {
		return check.Case{}, usagef("%q is not a case number (try: go run ./shop list)", s)
	}
	c, ok := checker.Find(n)
	if !ok {
		return check.Case{}, usagef("there is no case %d (the lab has cases 1 to %d)", n, len(checker.Cases()))
	}
	return c, nil
}

// moduleRoot finds the lab's folder: the nearest one above the working
// directory whose go.mod declares the lab's module.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && declares(string(data), check.Module) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", usagef("run this inside the lab's folder (the one with go.mod)")
		}
		dir = parent
	}
}

// declares reports whether a go.mod file declares module path.
func declares(gomod, path string) bool {
	for _, line := range strings.Split(gomod, "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "module" {
			return strings.Trim(f[1], `"`) == path
		}
	}
	return false
}
