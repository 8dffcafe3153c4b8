package point_test

import (
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"stampede/checker/point"
)

// constructs is a file with every kind of statement list a point can go
// in, and the statements that must not get one.
const constructs = `package p

func f(ch chan int, xs []int) (n int) {
	defer func() { n++ }()
	go func() { ch <- 1 }()
	if v := len(xs); v > 0 {
		n = v
	} else if v < 0 {
		return -1
	} else {
		n--
	}
	for i := range xs {
		if i == 2 {
			continue
		}
		n += xs[i]
	}
	switch n {
	case 1:
		n++
		fallthrough
	case 2:
		n++
	default:
	}
	var a any = n
	switch t := a.(type) {
	case int:
		n = t
	}
	select {
	case v := <-ch:
		n += v
	case ch <- 2:
	default:
	}
loop:
	for {
		break loop
	}
	goto end
end:
	{
		n++
	}
	const c = 1
	type T int
	var x T = c
	_ = x
	;
	return n
}
`

// withoutPoints takes the points back out of a rewritten file.
func withoutPoints(out string) string {
	out = strings.Replace(out, "; import "+point.Name+` "`+point.Import+`"`, "", 1)
	out = strings.TrimSuffix(out, "\nvar _ = "+point.Name+".Here\n")
	out = strings.ReplaceAll(out, point.Name+".Spawn(); ", "")
	return strings.ReplaceAll(out, point.Name+".Here(); ", "")
}

func TestRewriteKeepsEveryLineWhereItWas(t *testing.T) {
	out, err := point.Rewrite("p.go", []byte(constructs))
	require.NoError(t, err)
	require.Equal(t, constructs, withoutPoints(string(out)), "taking the points out gives the file back")
	lines := strings.Split(string(out), "\n")
	src := strings.Split(constructs, "\n")
	require.Len(t, lines, len(src)+2, "only the use of the import after the last line is new")
	for i, line := range src {
		require.Equal(t, line, withoutPoints(lines[i])[:len(line)], "line %d", i+1)
	}
}

func TestRewriteTypeChecks(t *testing.T) {
	out, err := point.Rewrite("p.go", []byte(constructs))
	require.NoError(t, err)
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", out, 0)
	require.NoError(t, err)
	conf := types.Config{Importer: fakePoint{}}
	_, err = conf.Check("p", fset, []*ast.File{f}, nil)
	require.NoError(t, err, "the rewritten file compiles:\n%s", out)

	// Where the points go, and where they do not.
	for _, want := range []string{
		"\t" + point.Name + ".Here(); defer func() { " + point.Name + ".Here(); n++ }()",
		"\t" + point.Name + ".Spawn(); go func() { " + point.Name + ".Here(); ch <- 1 }()", // a go statement's point marks its spawner
		"\t" + point.Name + ".Here(); if v := len(xs); v > 0 {",
		"\t\tfallthrough",   // a jump touches nothing
		"\tcase v := <-ch:", // a select's case is not a statement of its own
		"\t\t\tcontinue",    // jumps touch nothing
		"\tconst c = 1",
		"\t" + point.Name + ".Here(); var x T = c",
		"\n" + point.Name + ".Here(); loop:", // before the label: the loop stays labelled
	} {
		require.Contains(t, string(out), want+"\n")
	}
}

func TestRewriteRefusesWhatDoesNotParse(t *testing.T) {
	_, err := point.Rewrite("p.go", []byte("package p\nfunc f() {"))
	require.Error(t, err, "the grader then builds the file as it is, for the compiler's own message")
}

// TestRewriteEveryAnswerInTheLab rewrites every Go file of the shipped
// cases, the solutions and the library, and checks each as the first
// test checks the constructs: it parses, and taking the points out gives
// the file back. (That each compiles is proved by the library, whose
// entries must all build with their points.)
func TestRewriteEveryAnswerInTheLab(t *testing.T) {
	var files []string
	for _, dir := range []string{"cases", "solutions", "checker/library"} {
		err := filepath.WalkDir(filepath.Join("..", "..", dir), func(path string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
				files = append(files, path)
			}
			return err
		})
		require.NoError(t, err)
	}
	require.Greater(t, len(files), 100)
	for _, path := range files {
		src, err := os.ReadFile(path)
		require.NoError(t, err)
		out, err := point.Rewrite(filepath.Base(path), src)
		require.NoError(t, err, path)
		_, err = parser.ParseFile(token.NewFileSet(), path, out, 0)
		require.NoError(t, err, path)
		want := string(src)
		if !strings.HasSuffix(want, "\n") {
			want += "\n"
		}
		require.Equal(t, want, withoutPoints(string(out)), path)
	}
}

// fakePoint imports this package as the type checker needs it: Here and
// Spawn, functions of no arguments.
type fakePoint struct{}

func (fakePoint) Import(path string) (*types.Package, error) {
	if path != point.Import {
		return importer.Default().Import(path)
	}
	pkg := types.NewPackage(path, "point")
	sig := types.NewSignatureType(nil, nil, nil, nil, nil, false)
	pkg.Scope().Insert(types.NewFunc(token.NoPos, pkg, "Here", sig))
	pkg.Scope().Insert(types.NewFunc(token.NoPos, pkg, "Spawn", sig))
	pkg.MarkComplete()
	return pkg, nil
}
