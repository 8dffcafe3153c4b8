package checker

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The registry (Cases) is the one place a case is described. These tests
// hold to it the texts outside Go that list the cases, so that a case
// added or changed there and not here, or here and not there, fails.

// TestRegistry holds the cases to what the rest of the lab assumes of
// them: numbered 1 to N in order, each with a chapter that exists, points
// that sum to 100, and checks with ids of their own.
func TestRegistry(t *testing.T) {
	total := 0
	for i, c := range Cases() {
		assert.Equal(t, i+1, c.Number, "the cases are numbered 1 to N, in order")
		assert.Positive(t, c.Points, "case %d is worth no points", c.Number)
		total += c.Points
		assert.FileExists(t, filepath.Join("..", c.Chapter), "case %d's chapter", c.Number)
		assert.NotEmpty(t, c.Title, "case %d", c.Number)
		var ids []string
		for _, in := range c.Checks {
			assert.NotContains(t, ids, in.ID, "case %d has two checks %q", c.Number, in.ID)
			ids = append(ids, in.ID)
		}
	}
	assert.Equal(t, 100, total, "the cases' points sum to 100")
}

// TestRedisCasesInCI holds .ci/redis.sh's list of the cases it grades on a
// real Redis to the cases that play on Redis.
func TestRedisCasesInCI(t *testing.T) {
	script, err := os.ReadFile("../.ci/redis.sh")
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^redis_cases=\(([0-9 ]*)\)`).FindSubmatch(script)
	require.NotNil(t, m, ".ci/redis.sh should list its cases as redis_cases=(N ...)")
	var listed, want []int
	for _, f := range strings.Fields(string(m[1])) {
		n, err := strconv.Atoi(f)
		require.NoError(t, err)
		listed = append(listed, n)
	}
	for _, c := range Cases() {
		if c.Redis {
			want = append(want, c.Number)
		}
	}
	assert.Equal(t, want, listed, ".ci/redis.sh grades these cases on a real Redis: the ones whose Case says Redis")
}

// TestChaptersTable holds the table of docs/README.md to the registry: a
// row per case, in order, with its title and its chapter.
func TestChaptersTable(t *testing.T) {
	text, err := os.ReadFile("../docs/README.md")
	require.NoError(t, err)
	rows := regexp.MustCompile(`(?m)^\| (\d+) \| \[([^\]]+)\]\(([^)]+)\) \|`).FindAllSubmatch(text, -1)
	var got []string
	for _, r := range rows {
		got = append(got, string(r[1])+" "+string(r[2])+" docs/"+string(r[3]))
	}
	var want []string
	for _, c := range Cases() {
		want = append(want, strconv.Itoa(c.Number)+" "+c.Title+" "+c.Chapter)
	}
	assert.Equal(t, want, slices.Clip(got), "docs/README.md's table: a row per case, with its title and chapter")
}
