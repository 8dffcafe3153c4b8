package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"stampede/checker/check"
	"stampede/checker/compare"
)

// compareBlock is the closing chapter's copy of what `compare` prints:
//
//	<!-- figures: compare
//	  Redis lock   1   1   2258   0.269 s ...
//	-->
var compareBlock = regexp.MustCompile(`(?s)<!-- figures: compare\n(.*?)-->`)

// sameFigures reports whether a printed line says what a quoted line says:
// the same words, and each number within compare.Tolerance of the quoted
// one (or 30 ms, for the waits that jittered polls move: the Redis
// lock's, serve stale's and the leases' losers poll at random moments).
// Every count is exact on virtual time, and the tolerance is the one the
// command states.
func sameFigures(quoted, printed string) bool {
	q, p := strings.Fields(quoted), strings.Fields(printed)
	if len(q) != len(p) {
		return false
	}
	for i := range q {
		a, errA := strconv.ParseFloat(strings.TrimPrefix(q[i], "+"), 64)
		b, errB := strconv.ParseFloat(strings.TrimPrefix(p[i], "+"), 64)
		switch {
		case errA != nil || errB != nil:
			if q[i] != p[i] {
				return false
			}
		case b-a > compare.Tolerance*a+0.03 || a-b > compare.Tolerance*a+0.03:
			return false
		}
	}
	return true
}

func TestSameFigures(t *testing.T) {
	line := "Redis lock 1 1 2258 0.269 s 9000 0.9 s yes, for 30.2 s"
	assert.True(t, sameFigures(line, line))
	assert.True(t, sameFigures(line, "Redis lock 1 1 2294 0.25 s 9000 0.9 s yes, for 30.1 s"), "within the tolerance")
	assert.False(t, sameFigures(line, "Redis lock 2 1 2258 0.269 s 9000 0.9 s yes, for 30.2 s"), "one source read is not two")
	assert.False(t, sameFigures(line, "Redis lock 1 1 2258 0.269 s 9000 0.9 s no"), "the words differ")
	assert.False(t, sameFigures("no protection 2000", "no protection 1800"), "10% off")
}

// TestChapterQuotesWhatComparePrints plays the default workload and checks
// that every line the closing chapter quotes from `compare` is printed, up
// to the stated tolerance: the chapter's numbers and the command's stay in
// step.
func TestChapterQuotesWhatComparePrints(t *testing.T) {
	if testing.Short() {
		t.Skip("plays the whole table: not in -short")
	}
	docs, err := filepath.Glob(filepath.Join("..", "docs", "[0-9][0-9]-*.md"))
	require.NoError(t, err)
	var quoted []string
	var where string
	for _, doc := range docs {
		data, err := os.ReadFile(doc)
		require.NoError(t, err)
		for _, b := range compareBlock.FindAllStringSubmatch(string(data), -1) {
			where = filepath.Base(doc)
			for _, l := range strings.Split(b[1], "\n") {
				if l = figure(l); l != "" {
					quoted = append(quoted, l)
				}
			}
		}
	}
	require.NotEmpty(t, quoted, "a chapter quotes the compare table in a <!-- figures: compare --> block")

	code, stdout, stderr := runShop(t, "compare")
	require.Equal(t, exitPass, code, stderr)
	var printed []string
	for _, l := range strings.Split(stdout, "\n") {
		printed = append(printed, figure(l))
	}
	for _, q := range quoted {
		found := false
		for _, p := range printed {
			found = found || sameFigures(q, p)
		}
		assert.True(t, found, "%s quotes %q from `compare`, which printed nothing like it:\n%s", where, q, stdout)
	}
}

func TestCompareFlags(t *testing.T) {
	for _, args := range [][]string{
		{"compare", "--servers", "0"},
		{"compare", "--rate", "x"},
		{"compare", "--rebuild", "5s"},
		{"compare", "extra"},
	} {
		code, _, stderr := runShop(t, args...)
		assert.Equal(t, exitUsage, code, "shop %v", args)
		assert.Equal(t, 1, strings.Count(stderr, "\n"), "shop %v: %q", args, stderr)
	}
	code, stdout, stderr := runShop(t, "compare", "--servers", "4", "--rate", "400", "--rebuild", "100ms")
	require.Equal(t, exitPass, code, stderr)
	assert.Contains(t, stdout, "400 reads a second over 4 servers (100 each), a 0.1 s rebuild")
	assert.Contains(t, stdout, "no protection: 40 source reads; the example says 40")
}

// TestStudentRowIsPlayedApart builds the --student program around a
// package, as `compare --student` does around cases/caseNN, and plays it
// in a child process: the reference solution gives the reference figures.
func TestStudentRowIsPlayedApart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program: not in -short")
	}
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	w := compare.Default()
	w.Servers, w.Rate = 10, 1000
	a := compare.Cases()[2]
	require.Equal(t, 7, a.Case)
	res := studentRow(context.Background(), root, w, a, check.Module+"/solutions/case07", "solutions/case07")
	require.Empty(t, res.Err)
	assert.Equal(t, 10, res.Source)
	assert.Zero(t, res.Waited)

	res = studentRow(context.Background(), root, w, a, check.Module+"/solutions/case01", "solutions/case01")
	assert.Contains(t, res.Err, "does not compile", "case 1's New does not fit the XFetch row")
}
