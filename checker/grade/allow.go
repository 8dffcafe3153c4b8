package grade

import (
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"stampede/checker/check"
)

// What student code may use. The checks run the student's code in the same
// process as the checker's own code, so a package that reaches outside the
// language (unsafe, reflect, os, syscall, runtime's stack inspection) could
// read or change the checker's counters, write a verdict of its own, or
// start processes that outlive the check. The grader refuses such code
// before it builds it: that, not the worker's good manners, is what keeps
// a verdict honest. See "The threat model" in docs/design.md.
//
// The lists are import paths; a path ending in "/..." allows the package
// and every package below it.

// baseImports is what every case may import.
var baseImports = []string{
	"bytes", "cmp", "container/...", "context", "errors", "fmt", "hash/...", "io", "iter",
	"log", "log/slog", "maps", "math", "math/bits", "math/rand", "math/rand/v2",
	"regexp", "slices", "sort", "strconv", "strings", "sync", "sync/atomic", "time",
	"unicode/...",
	"golang.org/x/sync/...",
	"stampede/shop/...", // the shop's world: the catalog, the clock
}

// redisImports is what the cases on Redis (check.Case.Redis) add.
var redisImports = []string{
	"github.com/redis/go-redis/v9/...",
	"crypto/...", "encoding/...",
}

// runtimeAllowed are the only functions of package runtime that student
// code may call: yielding, counting CPUs, and ending its own goroutine.
// Everything else in runtime (Callers, Stack, SetFinalizer, GOMAXPROCS,
// LockOSThread...) inspects or changes the process the checker shares.
var runtimeAllowed = []string{"Gosched", "NumCPU", "Goexit"}

// Allowed returns the import paths and patterns case c may use.
func Allowed(c check.Case) []string {
	if c.Redis {
		return append(slices.Clone(baseImports), redisImports...)
	}
	return slices.Clone(baseImports)
}

// allows reports whether an import path matches one of the patterns.
func allows(patterns []string, path string) bool {
	for _, p := range patterns {
		if base, ok := strings.CutSuffix(p, "/..."); ok {
			if path == base || strings.HasPrefix(path, base+"/") {
				return true
			}
		} else if path == p {
			return true
		}
	}
	return false
}

// sourceExts are the files, other than Go's, that go build would compile or
// link into the package.
var sourceExts = []string{".s", ".S", ".sx", ".c", ".cc", ".cxx", ".cpp", ".h", ".hh", ".hpp", ".hxx",
	".m", ".f", ".F", ".for", ".f90", ".syso", ".swig", ".swigcxx"}

// Refusal is one thing in a folder that the lab does not build.
type Refusal struct {
	File string // the file's path as the student knows it, such as cases/case01/shop.go
	Line int    // 0 when it is about the whole file
	What string // what is wrong, in a sentence
}

func (r Refusal) String() string {
	if r.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", r.File, r.Line, r.What)
	}
	return r.File + ": " + r.What
}

// scan reads the Go files of dir (named rel in messages) and returns what
// in them the lab refuses to build for case c: an import outside the
// case's list, a runtime function other than runtime's allowed few, a
// //go:linkname or build constraint, cgo, a source file in another
// language, a package clause that is not one library package. It reads
// imports and declarations only; it never builds or runs anything.
func scan(dir, rel string, c check.Case) ([]Refusal, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	allowed := Allowed(c)
	fset := token.NewFileSet()
	var refused []Refusal
	add := func(file string, line int, format string, args ...any) {
		refused = append(refused, Refusal{File: filepath.ToSlash(filepath.Join(rel, file)), Line: line, What: fmt.Sprintf(format, args...)})
	}
	pkgName, pkgFile := "", ""
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || strings.HasSuffix(name, "_test.go") {
			continue
		}
		if ext := filepath.Ext(name); slices.Contains(sourceExts, ext) {
			add(name, 0, "the lab builds Go files only; remove this %s file", ext)
			continue
		}
		if !strings.HasSuffix(name, ".go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			// The compiler will say what is wrong, in its own words.
			continue
		}
		switch {
		case f.Name.Name == "main":
			add(name, fset.Position(f.Package).Line,
				"says package main, but a case is a package the checker imports, not a program: write package %s", filepath.Base(dir))
		case pkgName == "":
			pkgName, pkgFile = f.Name.Name, name
		case f.Name.Name != pkgName:
			add(name, fset.Position(f.Package).Line,
				"says package %s, but %s says package %s: all the files of a case are one package", f.Name.Name, pkgFile, pkgName)
		}
		hasConstraint := false
		for _, cg := range f.Comments {
			for _, c := range cg.List {
				switch {
				case strings.HasPrefix(c.Text, "//go:linkname"):
					add(name, fset.Position(c.Pos()).Line, "//go:linkname reaches into other packages' internals; the lab does not build it")
				case strings.HasPrefix(c.Text, "//go:build"), strings.HasPrefix(c.Text, "// +build"):
					if c.Pos() < f.Package {
						hasConstraint = true
						add(name, fset.Position(c.Pos()).Line, "a build constraint makes the code differ between builds (with and without the race detector); remove it")
					}
				case strings.HasPrefix(c.Text, "//go:cgo_"), strings.HasPrefix(c.Text, "//go:embed"):
					add(name, fset.Position(c.Pos()).Line, "%s is not allowed in a case", strings.Fields(c.Text)[0])
				}
			}
		}
		if !hasConstraint && constrained(dir, name) {
			add(name, 0, "go build leaves this file out on some systems (its name ends in a system or processor, such as _linux.go); the lab checks the same code everywhere, so give it a plain name")
		}
		runtimeName := ""
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			line := fset.Position(imp.Pos()).Line
			switch {
			case path == "C":
				add(name, line, `imports "C" (cgo); a case is plain Go`)
			case path == "runtime":
				runtimeName = "runtime"
				if imp.Name != nil {
					runtimeName = imp.Name.Name
				}
				if runtimeName == "_" || runtimeName == "." {
					add(name, line, `imports "runtime" as %s; import it by name, for runtime.%s only`, runtimeName, strings.Join(runtimeAllowed, ", runtime."))
				}
			case !allows(allowed, path):
				add(name, line, "imports %q, which a case may not use (%s)", path, whyRefused(path))
			}
		}
		if runtimeName != "" && runtimeName != "_" && runtimeName != "." {
			ast.Inspect(f, func(nd ast.Node) bool {
				sel, ok := nd.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				if id, ok := sel.X.(*ast.Ident); ok && id.Name == runtimeName && !slices.Contains(runtimeAllowed, sel.Sel.Name) {
					add(name, fset.Position(sel.Pos()).Line, "uses runtime.%s; a case may use only runtime.%s", sel.Sel.Name, strings.Join(runtimeAllowed, ", runtime."))
				}
				return true
			})
		}
	}
	return refused, nil
}

// whyRefused says in a few words why an import is not allowed.
func whyRefused(path string) string {
	switch {
	case path == "unsafe" || path == "reflect":
		return "it can read and change the checker's own memory"
	case path == "os" || strings.HasPrefix(path, "os/") || path == "syscall" || strings.HasPrefix(path, "golang.org/x/sys"):
		return "it reaches files, processes and the program's exit; the shop's code needs none of them"
	case path == "net" || strings.HasPrefix(path, "net/"):
		return "the shop's code talks to nothing but its database and cache"
	case strings.HasPrefix(path, "runtime/"):
		return "it inspects the process the checker shares"
	case strings.HasPrefix(path, "stampede/checker") || strings.HasPrefix(path, "stampede/solutions"):
		return "a case cannot use the checker or the reference solutions"
	case strings.HasPrefix(path, "stampede/cases"):
		return "a case is one package; put the code in its folder"
	}
	return "it is not on the list of what a case may import, in docs/README.md"
}

// constrained reports whether go build would leave name out on some
// system or build: a //go:build line or a _GOOS or _GOARCH file name.
func constrained(dir, name string) bool {
	for _, ctx := range []build.Context{
		{GOOS: "linux", GOARCH: "amd64", Compiler: "gc", CgoEnabled: true},
		{GOOS: "windows", GOARCH: "arm64", Compiler: "gc"},
		{GOOS: "darwin", GOARCH: "arm64", Compiler: "gc", CgoEnabled: true, BuildTags: []string{"race"}},
	} {
		if ok, err := ctx.MatchFile(dir, name); err == nil && !ok {
			return true
		}
	}
	return false
}
