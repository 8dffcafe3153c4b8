package checker

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"stampede/checker/check"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The registry (Cases) is the one place a case is described. These tests
// hold to it the texts outside Go that list the cases, so that a case
// added or changed there and not here, or here and not there, fails.

// TestRegistry holds the cases to what the rest of the lab assumes of
// them: numbered 1 to N in order, each with a chapter that exists, a
// weight, the texts its tables show, and checks with ids of their own.
func TestRegistry(t *testing.T) {
	for i, c := range Cases() {
		assert.Equal(t, i+1, c.Number, "the cases are numbered 1 to N, in order")
		assert.Positive(t, c.Points, "case %d is worth no points", c.Number)
		assert.FileExists(t, filepath.Join("..", c.Chapter), "case %d's chapter", c.Number)
		assert.NotEmpty(t, c.Title, "case %d", c.Number)
		assert.NotEmpty(t, c.Breaks, "case %d says what breaks, for README.md", c.Number)
		assert.NotEmpty(t, c.Lesson, "case %d says what it teaches, for docs/README.md", c.Number)
		var ids []string
		for _, in := range c.Checks {
			assert.NotContains(t, ids, in.ID, "case %d has two checks %q", c.Number, in.ID)
			ids = append(ids, in.ID)
		}
	}
	assert.FileExists(t, filepath.Join("..", CompareChapter))
}

// TestPointsSumTo100: every case's points are its weight scaled to 100,
// and sum to 100 whatever the weights; weights that sum to 100 are the
// points.
func TestPointsSumTo100(t *testing.T) {
	for _, cases := range [][]check.Case{
		Cases(),
		append(Cases(), check.Case{Number: len(Cases()) + 1, Points: 13}),
		{{Number: 1, Points: 1}, {Number: 2, Points: 1}, {Number: 3, Points: 1}},
	} {
		total := 0
		for _, p := range Points(cases) {
			total += p
		}
		assert.Equal(t, 100, total, "%d cases", len(cases))
	}
	weights := 0
	for _, c := range Cases() {
		weights += c.Points
	}
	for _, c := range Cases() {
		if weights == 100 {
			assert.Equal(t, c.Points, Points(Cases())[c.Number], "case %d: the weights sum to 100, so they are the points", c.Number)
		}
	}
	assert.Equal(t, map[int]int{1: 34, 2: 33, 3: 33}, Points([]check.Case{{Number: 1, Points: 1}, {Number: 2, Points: 1}, {Number: 3, Points: 1}}))
}

func TestSaid(t *testing.T) {
	assert.Equal(t, "6, 8, 9, 10", Said([]int{6, 8, 9, 10}))
	assert.Equal(t, "1 to 6, 8, 9, 10", Said([]int{1, 2, 3, 4, 5, 6, 8, 9, 10}))
	assert.Equal(t, "1, 2, 3, 5", Said([]int{1, 2, 3, 5}))
	assert.Equal(t, "", Said(nil))
}

var update = flag.Bool("update", false, "write the texts the registry writes (tables, CI's list) anew")

// generated is one text the registry writes into a file of the lab.
type generated struct {
	file  string
	write func(text string, cases []check.Case) (string, bool)
}

// generatedTexts are the texts outside Go that list the cases, each
// written from the registry.
var generatedTexts = []generated{
	{"README.md", func(text string, cases []check.Case) (string, bool) { return Splice(text, "cases", CasesTable(cases)) }},
	{"docs/README.md", func(text string, cases []check.Case) (string, bool) {
		return Splice(text, "chapters", ChaptersTable(cases))
	}},
	{".ci/redis.sh", func(text string, cases []check.Case) (string, bool) {
		re := regexp.MustCompile(`(?m)^redis_cases=\([0-9 ]*\)`)
		if !re.MatchString(text) {
			return text, false
		}
		ns := strings.Trim(fmt.Sprint(Numbers(cases, OnRedis)), "[]")
		return re.ReplaceAllLiteralString(text, "redis_cases=("+ns+")"), true
	}},
}

// TestGeneratedTexts holds the tables of README.md and docs/README.md and
// the list of cases .ci/redis.sh grades on a real Redis to the registry.
// With -update it writes them anew.
func TestGeneratedTexts(t *testing.T) {
	for _, g := range generatedTexts {
		path := filepath.Join("..", g.file)
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		want, ok := g.write(string(data), Cases())
		require.True(t, ok, "%s has lost the marks of what the registry writes", g.file)
		if *update {
			require.NoError(t, os.WriteFile(path, []byte(want), 0o644))
			continue
		}
		assert.Equal(t, want, string(data), "%s is out of step with the registry: go test ./checker -run TestGeneratedTexts -update", g.file)
	}
}

// TestANewCaseIsOneRegistryEntry adds a case to the registry, as a new
// case's one entry in Cases would, and holds every text and list written
// from the registry to name it: the tables, CI's Redis list, the points.
// (The help's lists, the Classroom workflow and what a case may import
// are written from it too, and shop's and grade's tests hold them.)
func TestANewCaseIsOneRegistryEntry(t *testing.T) {
	twelve := check.Case{Number: 12, Title: "The hot key", Chapter: "docs/13-hot-key.md", Points: 10, Redis: true,
		Breaks: "one key takes every read of the fleet", Lesson: "spread a hot key"}
	cases := append(Cases(), twelve)
	assert.Contains(t, CasesTable(cases), "| 12 | one key takes every read of the fleet | [12](docs/13-hot-key.md) |")
	assert.Contains(t, ChaptersTable(cases), "| 12 | [The hot key](13-hot-key.md) | spread a hot key |")
	assert.Equal(t, []int{6, 8, 9, 10, 11, 12}, Numbers(cases, OnRedis))
	assert.Positive(t, Points(cases)[12])
	for _, g := range generatedTexts {
		data, err := os.ReadFile(filepath.Join("..", g.file))
		require.NoError(t, err)
		got, ok := g.write(string(data), cases)
		require.True(t, ok)
		assert.NotEqual(t, string(data), got, "%s names the new case", g.file)
	}
}
