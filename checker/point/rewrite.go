package point

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
)

// Import is the import path of this package, as the rewritten code
// names it, and Name the name it is imported under: a name no student
// would give anything, so that it cannot clash with theirs.
const (
	Import = "stampede/checker/point"
	Name   = "stampedepoint"
)

// call is what Rewrite puts before a statement, and spawn before a go
// statement.
const (
	call  = Name + ".Here(); "
	spawn = Name + ".Spawn(); "
)

// Rewrite returns a copy of a Go source file with a call to Here before
// every statement that can touch shared state or wait: assignments and
// declarations, calls, sends and receives, go and defer, if, for, switch
// and select (whose headers read state), and return; before a go
// statement the call is to Spawn, a point that also marks its goroutine
// as one that has just started another. Each call goes on
// its statement's own line, just before it, so every line keeps its
// number; only the columns of those lines move. The import goes at the
// end of the package clause's line, and a use of it that keeps an
// otherwise pointless import legal after the last line. Statements in a
// header (an if's init, a select's case) get none: only statements in a
// block or a clause's body do.
//
// The file must parse; Rewrite returns the parser's error otherwise, and
// the caller builds the student's file as it is, so that the compiler's
// messages are the student's own.
func Rewrite(name string, src []byte) ([]byte, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	tf := fset.File(f.Pos())
	var at []int           // byte offsets that get a call
	goes := map[int]bool{} // those of go statements
	ast.Inspect(f, func(n ast.Node) bool {
		var list []ast.Stmt
		switch n := n.(type) {
		case *ast.BlockStmt:
			list = n.List
		case *ast.CaseClause:
			list = n.Body
		case *ast.CommClause:
			list = n.Body
		default:
			return true
		}
		for _, s := range list {
			if wants(s) {
				at = append(at, tf.Offset(s.Pos()))
			}
			if _, ok := s.(*ast.GoStmt); ok {
				goes[tf.Offset(s.Pos())] = true
			}
		}
		return true
	})
	slices.Sort(at)

	var out bytes.Buffer
	out.Grow(len(src) + len(at)*len(spawn) + 128)
	pkgEnd := tf.Offset(f.Name.End())
	last := 0
	for _, off := range at {
		if off < pkgEnd {
			return nil, fmt.Errorf("point: %s: a statement before the package clause", name)
		}
	}
	out.Write(src[:pkgEnd])
	fmt.Fprintf(&out, "; import %s %q", Name, Import)
	last = pkgEnd
	for _, off := range at {
		out.Write(src[last:off])
		if goes[off] {
			out.WriteString(spawn)
		} else {
			out.WriteString(call)
		}
		last = off
	}
	out.Write(src[last:])
	if len(src) > 0 && src[len(src)-1] != '\n' {
		out.WriteByte('\n')
	}
	fmt.Fprintf(&out, "\nvar _ = %s.Here\n", Name)
	return out.Bytes(), nil
}

// wants reports whether a statement gets a point before it: any that can
// touch shared state or wait. Jumps (break, continue, goto, fallthrough),
// empty statements, nested blocks (their statements get points of their
// own) and type and constant declarations touch nothing.
func wants(s ast.Stmt) bool {
	switch s := s.(type) {
	case *ast.EmptyStmt, *ast.BranchStmt, *ast.BlockStmt,
		*ast.CaseClause, *ast.CommClause: // a switch's or select's clauses are its block's statements
		return false
	case *ast.DeclStmt:
		g, ok := s.Decl.(*ast.GenDecl)
		return ok && g.Tok == token.VAR
	}
	return true
}
