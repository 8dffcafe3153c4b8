package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"stampede/checker"
	"stampede/checker/check"
)

// The chapters describe each case's checks in words; these tests hold the
// words to the registry of checks (checker.Cases), so that a check added,
// renamed or taken away fails `make test` until its chapter says so.

// chapterText returns a case's chapter with its markdown emphasis taken
// out and its white space collapsed, in lower case: a phrase broken over
// two lines, or set in bold, still reads as one.
func chapterText(t *testing.T, c check.Case) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", c.Chapter))
	require.NoError(t, err)
	s := strings.NewReplacer("**", "", "`", "").Replace(string(data))
	return strings.ToLower(strings.Join(strings.Fields(s), " "))
}

// headline is the part of a check's name that its chapter must use: the
// name up to its first comma, colon, semicolon or parenthesis, which is
// how the chapters set it in bold.
func headline(in check.Info) string {
	name := in.Name
	if i := strings.IndexAny(name, ",:;("); i > 0 {
		name = name[:i]
	}
	return strings.ToLower(strings.Join(strings.Fields(name), " "))
}

func TestEachChapterNamesEveryCheckOfItsCase(t *testing.T) {
	for _, c := range checker.Cases() {
		text := chapterText(t, c)
		for _, in := range c.Checks {
			assert.True(t, strings.Contains(text, headline(in)), "%s does not name case %d's check %q: %q",
				c.Chapter, c.Number, in.ID, headline(in))
		}
	}
}

// numbers are the counts the chapters write in words.
var numbers = map[string]int{
	"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
	"eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17,
	"eighteen": 18, "nineteen": 19, "twenty": 20,
}

// allChecks finds "all five checks", "all 17 checks" and the like.
var allChecks = regexp.MustCompile(`\ball ([a-z]+|[0-9]+) checks\b`)

func TestEachChapterCountsItsChecksRight(t *testing.T) {
	for _, c := range checker.Cases() {
		for _, m := range allChecks.FindAllStringSubmatch(chapterText(t, c), -1) {
			n, ok := numbers[m[1]]
			if !ok {
				var err error
				n, err = strconv.Atoi(m[1])
				if err != nil {
					continue // "all the checks"
				}
			}
			assert.Equal(t, len(c.Checks), n, "%s says %q: case %d has %d checks", c.Chapter, m[0], c.Number, len(c.Checks))
		}
	}
}

// verdictLine is a line of `check N` output as a chapter shows it: the
// verdict, then the check's name, then perhaps its figure and run count.
var verdictLine = regexp.MustCompile(`(?m)^\s*(PASS|FAIL|FLAKY|SKIP)  (.+)$`)

// runCount is the count after a verdict, "[3/3]"; the report prints it only
// for a check that ran more than once.
var runCount = regexp.MustCompile(`\[(\d+)/(\d+)\]`)

// A chapter shows `check N` as it prints at the default number of runs: a
// count only after a check that varies (check.Info.Varies), and one of
// its runs.
func TestChapterOutputShowsTheChecksAsTheyPrint(t *testing.T) {
	for _, c := range checker.Cases() {
		data, err := os.ReadFile(filepath.Join("..", c.Chapter))
		require.NoError(t, err)
		for _, m := range verdictLine.FindAllStringSubmatch(string(data), -1) {
			line := m[2]
			name := line
			if i := strings.Index(name, "  #"); i > 0 {
				name = name[:i] // the check's id, as --verbose shows it
			}
			if i := strings.Index(name, " ("); i > 0 {
				name = name[:i]
			}
			if i := strings.Index(name, " ["); i > 0 {
				name = name[:i]
			}
			var in check.Info
			known := false
			for _, it := range c.Checks {
				if strings.HasPrefix(it.Name, name) {
					in, known = it, true
				}
			}
			if !assert.True(t, known, "%s shows a %s line for no check of case %d: %q", c.Chapter, m[1], c.Number, line) {
				continue
			}
			runs := in.RunsOf(defaultRepeat)
			count := runCount.FindStringSubmatch(line)
			switch {
			case in.Race && m[1] == "FAIL" && strings.Contains(line, " so far)"):
				// Decided at the first race a run found, with no count.
			case runs == 1:
				if count != nil {
					t.Errorf("%s shows %s after %s, which runs once by default and prints no count", c.Chapter, count[0], in.ID)
				}
			case assert.NotNil(t, count, "%s shows no count after %s, which runs %d times by default", c.Chapter, in.ID, runs):
				assert.Equal(t, strconv.Itoa(runs), count[2], "%s shows %s after %s, which runs %d times by default", c.Chapter, count[0], in.ID, runs)
			}
		}
	}
}

// design.md tells how the lab is built in at most 500 lines (issue 24);
// history and findings go elsewhere (docs/explorer.md, the library).
func TestDesignDocStaysShort(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "docs", "design.md"))
	require.NoError(t, err)
	n := strings.Count(string(data), "\n")
	assert.LessOrEqual(t, n, 500, "docs/design.md has %d lines: say how the lab is built, and move history out", n)
}
