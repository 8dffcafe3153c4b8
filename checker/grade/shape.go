package grade

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
)

// declarations returns the signatures of New and of every exported method
// declared in the Go files of dir, keyed "New" and "Top" and so on, as
// "func New(db *catalog.DB) *Shop".
func declarations(dir string) (map[string]string, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	decls := map[string]string{}
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || !fn.Name.IsExported() || fn.Recv == nil && fn.Name.Name != "New" {
				continue
			}
			sig := *fn
			sig.Body, sig.Doc = nil, nil
			var b bytes.Buffer
			if err := printer.Fprint(&b, fset, &sig); err != nil {
				return nil, err
			}
			decls[fn.Name.Name] = b.String()
		}
	}
	return decls, nil
}

// shapeLines compares the target's declarations with the shipped case's and
// says, in the student's terms, what the checker expects and what it found.
func (w *Worker) shapeLines() []string {
	shipped := filepath.Join(w.root, "checker", "library", w.Target.Case.Dir(), "shipped")
	want, err := declarations(shipped)
	if err != nil || len(want) == 0 {
		return nil
	}
	got, err := declarations(filepath.Join(w.root, filepath.FromSlash(w.Target.Dir())))
	if err != nil {
		return nil
	}
	keys := make([]string, 0, len(want))
	for k := range want {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var lines []string
	for _, k := range keys {
		switch g, ok := got[k]; {
		case !ok:
			lines = append(lines, fmt.Sprintf("%s is missing; the checker calls: %s", k, want[k]))
		case g != want[k]:
			lines = append(lines, fmt.Sprintf("%s must be: %s", k, want[k]), fmt.Sprintf("%s is:      %s", strings.Repeat(" ", len(k)), g))
		}
	}
	return lines
}

// missing reports whether the compiler could not find the target's
// package at all: its folder is gone, or holds no Go files.
func missing(out string) bool {
	return strings.Contains(out, "is not in std") || strings.Contains(out, "no Go files in") ||
		strings.Contains(out, "cannot find package") || strings.Contains(out, "no required module provides")
}
