package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// figuresBlock is a chapter's list of the exact lines a story prints:
//
//	<!-- figures: run 5 [flags]
//	  bestseller queries:         1
//	-->
//
// Only lines that are the same on every run belong there: counts, figures
// on a virtual clock, the story's own text. Wall-clock times do not.
var figuresBlock = regexp.MustCompile(`(?s)<!-- figures: run ([^\n]*)\n(.*?)-->`)

// figure normalises a line for comparison: its words, one space apart.
func figure(line string) string { return strings.Join(strings.Fields(line), " ") }

// TestChaptersQuoteWhatRunPrints plays every story a chapter quotes, with
// the flags it quotes, and checks that each line the chapter marks as an
// exact figure is a line of what `shop run` prints.
func TestChaptersQuoteWhatRunPrints(t *testing.T) {
	if testing.Short() {
		t.Skip("plays every story: not in -short")
	}
	docs, err := filepath.Glob(filepath.Join("..", "docs", "[0-9][0-9]-*.md"))
	require.NoError(t, err)
	type quote struct {
		doc   string
		lines []string
	}
	quotes := map[string][]quote{} // run's arguments -> the chapters' lines
	var order []string
	for _, doc := range docs {
		data, err := os.ReadFile(doc)
		require.NoError(t, err)
		blocks := figuresBlock.FindAllStringSubmatch(string(data), -1)
		if strings.Contains(string(data), "$ go run ./shop run") {
			assert.NotEmpty(t, blocks, "%s quotes a story but marks none of its figures", doc)
		}
		for _, b := range blocks {
			args := figure(b[1])
			var lines []string
			for _, l := range strings.Split(b[2], "\n") {
				if l = figure(l); l != "" {
					lines = append(lines, l)
				}
			}
			require.NotEmpty(t, lines, "%s: an empty figures block for run %s", doc, args)
			if _, seen := quotes[args]; !seen {
				order = append(order, args)
			}
			quotes[args] = append(quotes[args], quote{filepath.Base(doc), lines})
		}
	}
	// The chapters quote the stories of the cases as shipped: they are
	// played on the shipped copies, never on cases/, which on a student's
	// clone holds their work.
	shipped := submissionDir(t, "shipped", fromShipped)
	for _, args := range order {
		t.Run(strings.ReplaceAll(args, " ", "_"), func(t *testing.T) {
			argv := append([]string{"run"}, strings.Fields(args)...)
			if !strings.Contains(args, "--solution") {
				argv = append(argv, "--cases", shipped)
			}
			code, stdout, stderr := runShop(t, argv...)
			printed := map[string]bool{}
			for _, l := range strings.Split(stdout, "\n") {
				printed[figure(l)] = true
			}
			for _, q := range quotes[args] {
				for _, l := range q.lines {
					assert.True(t, printed[l], "%s quotes %q from `run %s`, and the story did not print it "+
						"(exit %d):\n%s%s", q.doc, l, args, code, stdout, stderr)
				}
			}
		})
	}
}
