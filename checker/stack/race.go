package stack

import (
	"fmt"
	"strings"
)

// Race is one report of Go's race detector, reduced to the two accesses.
type Race struct {
	Access, Previous     string // "write", "read"
	AccessAt, PreviousAt Frame  // the innermost frames in the student's package
	Report               string // the detector's whole report
}

// String says where the two accesses are, such as
// "write at cases/case01/shop.go:42 against read at cases/case01/shop.go:30".
func (r Race) String(module string) string {
	return fmt.Sprintf("%s at %s against %s at %s",
		r.Access, where(r.AccessAt, module), r.Previous, where(r.PreviousAt, module))
}

func where(f Frame, module string) string {
	if f.File == "" {
		return "an unknown place"
	}
	return Where(f, module)
}

// Key names the race by its two accesses in either order: the detector
// reports the same pair as "write against read" or "read against write"
// depending on which came second.
func (r Race) Key() string {
	a := r.Access + "@" + where(r.AccessAt, "")
	b := r.Previous + "@" + where(r.PreviousAt, "")
	if b < a {
		a, b = b, a
	}
	return a + " " + b
}

// Races reads the race detector's reports from a program's standard error
// and keeps, for each access, the innermost frame in dir (a package
// directory such as "stampede/cases/case01"). Reports that are the same at
// that depth are listed once.
func Races(stderr, dir string) []Race {
	var out []Race
	seen := map[string]bool{}
	for _, block := range strings.Split(stderr, "WARNING: DATA RACE")[1:] {
		block, _, _ = strings.Cut(block, "==================")
		r, ok := parseRace(block, dir)
		if !ok {
			continue
		}
		r.Report = "WARNING: DATA RACE" + block + "=================="
		if key := r.Key(); !seen[key] {
			seen[key] = true
			out = append(out, r)
		}
	}
	return out
}

// parseRace reads one report: a "Write at 0x… by goroutine 7:" section, a
// "Previous read at 0x… by goroutine 8:" section, and the creation stacks.
func parseRace(block, dir string) (Race, bool) {
	var r Race
	section := 0 // 1: the access, 2: the previous access, 3: anything else
	for _, line := range strings.Split(block, "\n") {
		t := strings.TrimSpace(line)
		switch {
		case t == "":
			continue
		case !strings.HasPrefix(line, " ") && !strings.HasPrefix(line, "\t"):
			section = 3
			kind, _, _ := strings.Cut(strings.ToLower(t), " at ")
			if prev, ok := strings.CutPrefix(kind, "previous "); ok {
				section, r.Previous = 2, prev
			} else if kind == "read" || kind == "write" || strings.HasPrefix(kind, "atomic ") {
				section, r.Access = 1, kind
			}
		case section == 1 || section == 2:
			if !strings.Contains(t, ".go:") {
				continue
			}
			file, n := fileLine(t)
			at := &r.AccessAt
			if section == 2 {
				at = &r.PreviousAt
			}
			if at.File == "" && inDir(file, dir) {
				*at = Frame{File: file, Line: n}
			}
		}
	}
	return r, r.Access != "" && r.Previous != ""
}
