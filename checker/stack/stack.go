// Package stack reads Go's goroutine dumps and race reports, so that the
// checker can say in one line where a student's code is stuck or racing.
//
// The worker is built with -trimpath, so file names in its stacks start with
// the module path ("stampede/cases/case01/shop.go"), wherever the lab lives.
package stack

import (
	"fmt"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
)

// Frame is one call in a goroutine's stack.
type Frame struct {
	Func string // "stampede/cases/case01.(*Shop).Top"
	File string // "stampede/cases/case01/shop.go"
	Line int
}

// Goroutine is one goroutine of a dump.
type Goroutine struct {
	ID        int
	State     string  // "sync.Mutex.Lock", "chan receive", "running", ...
	Frames    []Frame // innermost first
	CreatedBy []Frame // where the goroutine was started
}

var header = regexp.MustCompile(`^goroutine (\d+) (?:gp=\S+ m=\S+ (?:mp=\S+ )?)?\[([^\]]*)\]:$`)

// Parse reads every goroutine of a dump such as runtime.Stack(buf, true)
// writes, or the tail of a crashed program's standard error.
func Parse(dump string) []Goroutine {
	var gs []Goroutine
	var cur *Goroutine
	lines := strings.Split(dump, "\n")
	for i := 0; i < len(lines); i++ {
		line := strings.TrimRight(lines[i], "\r")
		if m := header.FindStringSubmatch(line); m != nil {
			id, _ := strconv.Atoi(m[1])
			state, _, _ := strings.Cut(m[2], ",")
			gs = append(gs, Goroutine{ID: id, State: state})
			cur = &gs[len(gs)-1]
			continue
		}
		if cur == nil || line == "" || strings.HasPrefix(line, "\t") {
			if line == "" {
				cur = nil
			}
			continue
		}
		created := false
		fn := line
		if rest, ok := strings.CutPrefix(line, "created by "); ok {
			created = true
			fn, _, _ = strings.Cut(rest, " in goroutine ")
		}
		f := Frame{Func: trimArgs(fn)}
		if i+1 < len(lines) && strings.HasPrefix(lines[i+1], "\t") {
			f.File, f.Line = fileLine(lines[i+1])
			i++
		}
		if created {
			cur.CreatedBy = append(cur.CreatedBy, f)
		} else {
			cur.Frames = append(cur.Frames, f)
		}
	}
	return gs
}

// trimArgs drops the argument list from "pkg.(*T).Func(0x1, 0x2)". A name
// never ends in ")" itself, so the last "(" opens the arguments.
func trimArgs(fn string) string {
	if i := strings.LastIndex(fn, "("); i > 0 && strings.HasSuffix(fn, ")") {
		return fn[:i]
	}
	return fn
}

// fileLine reads "\tpath/file.go:42 +0x1c".
func fileLine(s string) (string, int) {
	s = strings.TrimSpace(s)
	s, _, _ = strings.Cut(s, " ")
	i := strings.LastIndex(s, ":")
	if i < 0 {
		return s, 0
	}
	n, _ := strconv.Atoi(s[i+1:])
	return s[:i], n
}

// In returns the innermost frame whose file lies in the package directory
// dir (a path such as "stampede/cases/case01"), looking at the stack first
// and then at where the goroutine was created.
func (g Goroutine) In(dir string) (Frame, bool) {
	for _, f := range slices.Concat(g.Frames, g.CreatedBy) {
		if inDir(f.File, dir) {
			return f, true
		}
	}
	return Frame{}, false
}

// Has reports whether any frame's file lies in dir.
func (g Goroutine) Has(dir string) bool {
	_, ok := g.In(dir)
	return ok
}

// inDir reports whether file lies directly in the package directory dir.
func inDir(file, dir string) bool {
	i := strings.LastIndex(file, "/")
	if i < 0 {
		return false
	}
	d := file[:i]
	return d == dir || strings.HasSuffix(d, "/"+dir)
}

// Where formats a frame as "cases/case01/shop.go:31" by dropping the module
// path from its file name.
func Where(f Frame, module string) string {
	file := strings.TrimPrefix(f.File, module+"/")
	return fmt.Sprintf("%s:%d", file, f.Line)
}

// Parked reports whether a goroutine in this state is blocked and cannot
// move until another goroutine, or a timer, lets it.
//
// Plain "semacquire" is not parked: every lock of the sync package shows
// by its own name (sync.Mutex.Lock, sync.WaitGroup.Wait, ...), and what is
// left is the runtime's own waits (to start a garbage collection, which the
// snapshots themselves can hold up) and a file's write lock, which all go
// on without any other goroutine's help.
func Parked(state string) bool {
	switch {
	case strings.HasPrefix(state, "sync."), // sync.Mutex.Lock, sync.WaitGroup.Wait, ...
		strings.HasPrefix(state, "chan "), // chan receive, chan send, ... (nil chan)
		strings.HasPrefix(state, "select"),
		state == "sleep":
		return true
	}
	return false
}

// Blocked reports whether g is parked waiting for another goroutine: in a
// parked state, and not merely queued for a file or a pipe (a goroutine
// that prints while others print waits in semacquire on the file's lock,
// and will go on without anyone's help).
func (g Goroutine) Blocked() bool {
	if !Parked(g.State) {
		return false
	}
	for _, f := range g.Frames {
		if strings.HasPrefix(f.Func, "internal/poll.") || strings.HasPrefix(f.Func, "os.(*File).") ||
			strings.HasPrefix(f.Func, "syscall.") {
			return false
		}
	}
	return true
}

// Timed reports whether a goroutine in this state may wake by itself, when
// a timer fires: asleep, or in a select that may have a timer case.
func Timed(state string) bool {
	return state == "sleep" || state == "select"
}

// Dump returns the stacks of every goroutine, the caller's first, as
// runtime.Stack writes them, however many there are.
func Dump() string {
	buf := make([]byte, 1<<16)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return string(buf[:n])
		}
		buf = make([]byte, 2*len(buf))
	}
}

// All returns every goroutine, parsed, the caller's first.
func All() []Goroutine { return Parse(Dump()) }
