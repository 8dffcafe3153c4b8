// Package patch reads the library's wrong entries, each written as its
// change to a base (the reference solution or the shipped case), and
// applies them.
//
// An entry file is the mistake in words, a line "base: DIR" naming the
// base's folder below the module root, and the change as a unified diff of
// the base's files (diff -u, with file names as they stand in the folder):
//
//	The holder releases the lock with a plain DEL ...
//
//	base: solutions/case06
//	--- shop.go
//	+++ shop.go
//	@@ -120,7 +120,7 @@
//	 unchanged line
//	-the base's line
//	+the entry's line
//
// A file added whole comes from /dev/null; a file removed goes to it. A
// hunk applies only where it says, to the letter: an entry whose base has
// moved on fails to apply, naming the entry, the file and the line, and is
// written again against the new base.
package patch

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Entry is one wrong entry: the mistake, the base and the change.
type Entry struct {
	Mistake string // the words before the base line
	Base    string // the base's folder below the module root, "solutions/case06"
	Files   []File
}

// File is the change to one file of the base.
type File struct {
	Name  string // the file's name in the folder, "shop.go"
	New   bool   // added whole: from /dev/null
	Gone  bool   // removed: to /dev/null
	Hunks []Hunk
}

// Hunk is one run of changed lines, with the lines around it.
type Hunk struct {
	Line  int      // where it starts in the base, from 1 (0 for a new file)
	Count int      // how many lines of the base it covers
	Lines []string // each with its mark: ' ' kept, '-' removed, '+' added
	at    int      // its line in the entry file, for messages
}

// Read reads the entry at path.
func Read(path string) (*Entry, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	e, err := Parse(string(data))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return e, nil
}

// Parse reads an entry from its text.
func Parse(text string) (*Entry, error) {
	e := &Entry{}
	var mistake []string
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 0, 1<<16), 1<<20)
	n := 0
	var f *File
	var h *Hunk
	oldLeft, newLeft := 0, 0 // lines the current hunk still has, of the base and of the entry
	for sc.Scan() {
		n++
		line := sc.Text()
		if h != nil && (oldLeft > 0 || newLeft > 0) {
			// Inside a hunk every line is the hunk's, whatever it starts
			// with: a removed "-- comment" of a Lua script reads "--- ".
			if line == "" {
				line = " " // an editor may strip a blank context line's space
			}
			switch line[0] {
			case ' ':
				oldLeft--
				newLeft--
			case '-':
				oldLeft--
			case '+':
				newLeft--
			default:
				if strings.HasPrefix(line, `\ No newline`) {
					continue
				}
				return nil, fmt.Errorf("line %d: the hunk at line %d is %d lines short", n, h.at, max(oldLeft, newLeft))
			}
			if oldLeft < 0 || newLeft < 0 {
				return nil, fmt.Errorf("line %d: longer than the hunk at line %d says", n, h.at)
			}
			h.Lines = append(h.Lines, line)
			continue
		}
		switch {
		case e.Base == "":
			if b, ok := strings.CutPrefix(line, "base: "); ok {
				e.Base = strings.TrimSpace(b)
				e.Mistake = strings.TrimSpace(strings.Join(mistake, "\n"))
				continue
			}
			mistake = append(mistake, line)
		case strings.HasPrefix(line, "--- "):
			e.Files = append(e.Files, File{Name: name(line[4:])})
			f, h = &e.Files[len(e.Files)-1], nil
			f.New = f.Name == "/dev/null"
		case strings.HasPrefix(line, "+++ ") && f != nil && len(f.Hunks) == 0 && h == nil:
			to := name(line[4:])
			switch {
			case to == "/dev/null":
				f.Gone = true
			case f.New:
				f.Name = to
			case to != f.Name:
				return nil, fmt.Errorf("line %d: a change of %s names %s: renames are not supported", n, f.Name, to)
			}
		case strings.HasPrefix(line, "@@ "):
			if f == nil {
				return nil, fmt.Errorf("line %d: a hunk before any file", n)
			}
			start, count, added, err := hunkHeader(line)
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", n, err)
			}
			f.Hunks = append(f.Hunks, Hunk{Line: start, Count: count, at: n})
			h = &f.Hunks[len(f.Hunks)-1]
			oldLeft, newLeft = count, added
		case strings.HasPrefix(line, `\ No newline`), line == "" && h != nil:
		default:
			return nil, fmt.Errorf("line %d: not part of a diff: %q", n, line)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if oldLeft > 0 || newLeft > 0 {
		return nil, fmt.Errorf("the hunk at line %d is %d lines short at the end", h.at, max(oldLeft, newLeft))
	}
	if e.Base == "" {
		return nil, fmt.Errorf(`no "base: DIR" line`)
	}
	if len(e.Files) == 0 {
		return nil, fmt.Errorf("no change after the base line")
	}
	return e, nil
}

// name is a file name from a --- or +++ line, without a timestamp or an
// a/ or b/ prefix.
func name(s string) string {
	s, _, _ = strings.Cut(s, "\t")
	s = strings.TrimSpace(s)
	if s == "/dev/null" {
		return s
	}
	s = strings.TrimPrefix(strings.TrimPrefix(s, "a/"), "b/")
	return filepath.Base(s)
}

// hunkHeader reads "@@ -l,s +l,s @@" and returns the base's start and
// count, and the entry's count.
func hunkHeader(line string) (start, count, added int, err error) {
	bad := fmt.Errorf("a hunk header should read @@ -LINE,COUNT +LINE,COUNT @@: %q", line)
	fields := strings.Fields(line)
	if len(fields) < 4 || fields[3] != "@@" || !strings.HasPrefix(fields[1], "-") || !strings.HasPrefix(fields[2], "+") {
		return 0, 0, 0, bad
	}
	span := func(s string) (int, int, bool) {
		from, count, ok := strings.Cut(s, ",")
		if !ok {
			count = "1"
		}
		l, err1 := strconv.Atoi(from)
		c, err2 := strconv.Atoi(count)
		return l, c, err1 == nil && err2 == nil
	}
	start, count, ok1 := span(fields[1][1:])
	_, added, ok2 := span(fields[2][1:])
	if !ok1 || !ok2 {
		return 0, 0, 0, bad
	}
	return start, count, added, nil
}

// Apply returns the entry's files, by name, made from the base's files
// (by name, as they are read from Base). A file of the base the entry does
// not change is in the result as it is.
func (e *Entry) Apply(base map[string]string) (map[string]string, error) {
	out := make(map[string]string, len(base))
	for n, text := range base {
		out[n] = text
	}
	for _, f := range e.Files {
		switch {
		case f.Gone:
			if _, ok := out[f.Name]; !ok {
				return nil, fmt.Errorf("%s removes %s, which %s does not have", e.Base, f.Name, e.Base)
			}
			delete(out, f.Name)
		case f.New:
			if _, ok := out[f.Name]; ok {
				return nil, fmt.Errorf("adds %s, which %s has already", f.Name, e.Base)
			}
			text, err := f.apply("")
			if err != nil {
				return nil, err
			}
			out[f.Name] = text
		default:
			text, ok := out[f.Name]
			if !ok {
				return nil, fmt.Errorf("changes %s, which %s does not have", f.Name, e.Base)
			}
			text, err := f.apply(text)
			if err != nil {
				return nil, fmt.Errorf("%s of %s: %w", f.Name, e.Base, err)
			}
			out[f.Name] = text
		}
	}
	return out, nil
}

// apply applies the file's hunks to text, each exactly where it says.
func (f File) apply(text string) (string, error) {
	var lines []string
	if text != "" {
		lines = strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	}
	var out []string
	next := 0 // the first line of lines not yet copied, from 0
	for _, h := range f.Hunks {
		start := h.Line - 1
		if h.Count == 0 {
			start = h.Line // a pure addition comes after line Line
		}
		if start < next || start > len(lines) {
			return "", fmt.Errorf("the hunk at line %d of the entry starts at line %d, outside the base's %d lines or before the hunk above it", h.at, h.Line, len(lines))
		}
		out = append(out, lines[next:start]...)
		at := start
		for _, l := range h.Lines {
			mark, body := l[0], l[1:]
			switch mark {
			case ' ', '-':
				if at >= len(lines) || lines[at] != body {
					got := "the end of the file"
					if at < len(lines) {
						got = strconv.Quote(lines[at])
					}
					return "", fmt.Errorf("the hunk at line %d of the entry expects %q at line %d of the base, which has %s: the base has moved on; write the entry again against it", h.at, body, at+1, got)
				}
				if mark == ' ' {
					out = append(out, body)
				}
				at++
			case '+':
				out = append(out, body)
			}
		}
		next = at
	}
	out = append(out, lines[next:]...)
	if len(out) == 0 {
		return "", nil
	}
	return strings.Join(out, "\n") + "\n", nil
}
