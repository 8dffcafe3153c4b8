package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"stampede/checker/check"
	"stampede/checker/grade"
)

// diffCmd shows the student's case against the reference solution as a
// unified diff, one file at a time.
func diffCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("diff", flag.ContinueOnError)
	rest, err := parse(fs, args, false)
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		return usagef("diff takes one case number, such as: go run ./shop diff 1")
	}
	c, err := caseArg(rest[0])
	if err != nil {
		return err
	}
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	if _, err := prepare(ctx, root, true, []check.Case{c}, newProgress(stderr)); err != nil {
		return err
	}
	rep, err := grade.Grade(ctx, grade.Student(c), grade.Options{Root: root, Repeat: 1})
	if err != nil {
		return err
	}
	if statusOfReport(rep) != CasePass {
		yellow.Fprintf(stdout, "Case %d is not solved yet: what follows shows the reference solution's answer.\n\n", c.Number)
	}
	mine, theirs := filepath.Join("cases", c.Dir()), filepath.Join("solutions", c.Dir())
	names, err := goNames(root, mine, theirs)
	if err != nil {
		return err
	}
	for _, name := range names {
		a := readLines(filepath.Join(root, mine, name))
		b := readLines(filepath.Join(root, theirs, name))
		printUnified(stdout, filepath.Join(mine, name), filepath.Join(theirs, name), a, b)
	}
	return nil
}

// goNames lists the Go file names in either directory.
func goNames(root string, dirs ...string) ([]string, error) {
	var names []string
	for _, d := range dirs {
		found, err := filepath.Glob(filepath.Join(root, d, "*.go"))
		if err != nil {
			return nil, err
		}
		for _, f := range found {
			names = append(names, filepath.Base(f))
		}
	}
	slices.Sort(names)
	return slices.Compact(names), nil
}

// readLines reads a file as lines; a missing file reads as none.
func readLines(path string) []string {
	data, err := os.ReadFile(path)
	if err != nil || len(data) == 0 {
		return nil
	}
	return strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
}

// op is one line of a diff: ' ' kept, '-' only in a, '+' only in b.
type op struct {
	kind byte
	text string
	a, b int // line numbers, from 1, in a and in b
}

// lineDiff returns the shortest edit from a to b, by the longest common
// subsequence of lines. The lab's files are short, so the quadratic table
// costs nothing.
func lineDiff(a, b []string) []op {
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var ops []op
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			ops = append(ops, op{' ', a[i], i + 1, j + 1})
			i, j = i+1, j+1
		case i < len(a) && (j == len(b) || lcs[i+1][j] >= lcs[i][j+1]):
			ops = append(ops, op{'-', a[i], i + 1, j})
			i++
		default:
			ops = append(ops, op{'+', b[j], i, j + 1})
			j++
		}
	}
	return ops
}

// printUnified writes a unified diff of a and b with three lines of
// context, red for removed lines and green for added ones.
func printUnified(w io.Writer, aName, bName string, a, b []string) {
	ops := lineDiff(a, b)
	const context = 3
	var hunks [][2]int // [start, end) ranges of ops
	for k := 0; k < len(ops); k++ {
		if ops[k].kind == ' ' {
			continue
		}
		start, end := max(k-context, 0), min(k+context+1, len(ops))
		if n := len(hunks); n > 0 && start <= hunks[n-1][1] {
			hunks[n-1][1] = end
		} else {
			hunks = append(hunks, [2]int{start, end})
		}
	}
	if len(hunks) == 0 {
		return
	}
	fmt.Fprintf(w, "--- %s\n+++ %s\n", aName, bName)
	for _, h := range hunks {
		part := ops[h[0]:h[1]]
		aStart, bStart, aLen, bLen := 0, 0, 0, 0
		for _, o := range part {
			if o.kind != '+' {
				aLen++
				if aStart == 0 {
					aStart = o.a
				}
			}
			if o.kind != '-' {
				bLen++
				if bStart == 0 {
					bStart = o.b
				}
			}
		}
		if aStart == 0 {
			aStart = part[0].a
		}
		if bStart == 0 {
			bStart = part[0].b
		}
		dim.Fprintf(w, "@@ -%d,%d +%d,%d @@\n", aStart, aLen, bStart, bLen)
		for _, o := range part {
			switch o.kind {
			case '-':
				red.Fprintf(w, "-%s\n", o.text)
			case '+':
				green.Fprintf(w, "+%s\n", o.text)
			default:
				fmt.Fprintf(w, " %s\n", o.text)
			}
		}
	}
}
