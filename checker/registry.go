package checker

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"stampede/checker/check"
)

// What the lab writes from the registry: each case's points out of 100,
// the lists of cases the help and CI name, and the tables of README.md and
// docs/README.md. Each is a function of the cases it is given, so that a
// test can add a case to the registry and see every one of them follow
// (TestANewCaseIsOneRegistryEntry).

// Points returns what each case is worth out of 100, by number: the cases'
// weights (check.Case.Points) scaled to 100, each rounded down and the
// points left over given to the largest remainders, so that they sum to
// 100 exactly. Weights that sum to 100 are their own points.
func Points(cases []check.Case) map[int]int {
	total := 0
	for _, c := range cases {
		total += c.Points
	}
	out := map[int]int{}
	if total == 0 {
		return out
	}
	type share struct{ n, rest int }
	var shares []share
	given := 0
	for _, c := range cases {
		out[c.Number] = 100 * c.Points / total
		given += out[c.Number]
		shares = append(shares, share{c.Number, 100 * c.Points % total})
	}
	slices.SortStableFunc(shares, func(a, b share) int { return b.rest - a.rest })
	for i := 0; given < 100; i++ {
		out[shares[i%len(shares)].n]++
		given++
	}
	return out
}

// Numbers returns the numbers of the cases that keep holds for, in order.
func Numbers(cases []check.Case, keep func(check.Case) bool) []int {
	var out []int
	for _, c := range cases {
		if keep(c) {
			out = append(out, c.Number)
		}
	}
	return out
}

// OnRedis reports whether a case plays on Redis, for Numbers.
func OnRedis(c check.Case) bool { return c.Redis }

// Said writes case numbers as a sentence does: "6, 8, 9, 10", a run of
// four or more as a range ("1 to 6, 8, 9, 10").
func Said(ns []int) string {
	var parts []string
	for i := 0; i < len(ns); {
		j := i
		for j+1 < len(ns) && ns[j+1] == ns[j]+1 {
			j++
		}
		if j-i >= 3 {
			parts = append(parts, fmt.Sprintf("%d to %d", ns[i], ns[j]))
		} else {
			for k := i; k <= j; k++ {
				parts = append(parts, strconv.Itoa(ns[k]))
			}
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}

// CasesTable is README.md's table of the cases: what breaks in each, and
// its chapter.
func CasesTable(cases []check.Case) string {
	var b strings.Builder
	b.WriteString("| case | what breaks | chapter |\n|---|---|---|\n")
	for _, c := range cases {
		fmt.Fprintf(&b, "| %d | %s | [%02d](%s) |\n", c.Number, c.Breaks, c.Number, c.Chapter)
	}
	return b.String()
}

// ChaptersTable is docs/README.md's table of the chapters: each case's
// title, linked to its chapter, and what it teaches, then the chapter
// that is no case's, `shop compare`'s.
func ChaptersTable(cases []check.Case) string {
	var b strings.Builder
	b.WriteString("| case | chapter | what it teaches |\n|---|---|---|\n")
	for _, c := range cases {
		fmt.Fprintf(&b, "| %d | [%s](%s) | %s |\n", c.Number, c.Title, strings.TrimPrefix(c.Chapter, "docs/"), c.Lesson)
	}
	fmt.Fprintf(&b, "| - | [Every technique on one workload](%s) | %s |\n", strings.TrimPrefix(CompareChapter, "docs/"),
		"`shop compare`: the worked example at full scale, every reference solution measured side by side, and how to choose")
	return b.String()
}

// CompareChapter is the chapter of `shop compare`, after the cases'.
const CompareChapter = "docs/11-side-by-side.md"

// Begin and End mark the part of a file the registry writes, name being
// what it is ("cases"): the lines between them are written by `go test
// ./checker -run TestGeneratedTexts -update`, and a test fails while they
// differ from what the registry says.
func Begin(name string) string {
	return "<!-- " + name + ": written from the registry, checker.Cases (go test ./checker -run TestGeneratedTexts -update) -->"
}

// End is the line after the part Begin starts.
func End(name string) string { return "<!-- end of " + name + " -->" }

// Splice returns text with the lines between name's marks replaced by
// part, and false when text has no such marks.
func Splice(text, name, part string) (string, bool) {
	begin, end := Begin(name)+"\n", End(name)
	i := strings.Index(text, begin)
	j := strings.Index(text, end)
	if i < 0 || j < i {
		return text, false
	}
	return text[:i+len(begin)] + part + text[j:], true
}
