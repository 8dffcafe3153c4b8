// Command overlay writes, for go build's and go test's -overlay flag, the
// copies with schedule points (see package point) of every Go file in the
// folders it is given, as the grader builds a student's code: `make
// proof` proves the explorers' right answers with their points in.
//
//	go run ./checker/point/overlay -out DIR FOLDER...
//
// It writes the copies and DIR/overlay.json, and prints the JSON's path.
// Test files are left as they are.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"stampede/checker/point"
)

func main() {
	out := flag.String("out", "", "the folder to write the copies and overlay.json in")
	flag.Parse()
	if *out == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: overlay -out DIR FOLDER...")
		os.Exit(2)
	}
	path, err := write(*out, flag.Args())
	if err != nil {
		fmt.Fprintln(os.Stderr, "overlay:", err)
		os.Exit(1)
	}
	fmt.Println(path)
}

// write writes the copies of folders' Go files below out, and the
// overlay that lays each over its original, and returns the overlay's
// path.
func write(out string, folders []string) (string, error) {
	replace := map[string]string{}
	for i, dir := range folders {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			return "", err
		}
		copies := filepath.Join(out, fmt.Sprint(i))
		if err := os.MkdirAll(copies, 0o755); err != nil {
			return "", err
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			src, err := os.ReadFile(f)
			if err != nil {
				return "", err
			}
			rewritten, err := point.Rewrite(filepath.Base(f), src)
			if err != nil {
				return "", fmt.Errorf("%s: %w", f, err)
			}
			abs, err := filepath.Abs(f)
			if err != nil {
				return "", err
			}
			copyPath, err := filepath.Abs(filepath.Join(copies, filepath.Base(f)))
			if err != nil {
				return "", err
			}
			if err := os.WriteFile(copyPath, rewritten, 0o644); err != nil {
				return "", err
			}
			replace[abs] = copyPath
		}
	}
	data, err := json.Marshal(map[string]any{"Replace": replace})
	if err != nil {
		return "", err
	}
	path, err := filepath.Abs(filepath.Join(out, "overlay.json"))
	if err != nil {
		return "", err
	}
	return path, os.WriteFile(path, data, 0o644)
}
