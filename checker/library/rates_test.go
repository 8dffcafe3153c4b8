package library

import (
	"context"
	"flag"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"stampede/checker"
	"stampede/checker/grade"
)

var (
	rates     = flag.Int("rates", 0, "with N > 0: play about N explorer scenes on each entry of -rates-case that the explorer fails, and log the share that break a rule")
	ratesCase = flag.Int("rates-case", 10, "the case whose entries -rates measures")
)

// brokeAt reads the scene that broke a rule from a failed explore check's
// figure ("scene 4 of 24 broke an invariant (seed 4)").
var brokeAt = regexp.MustCompile(`^scene (\d+) of \d+ broke`)

// TestExploreRates measures, for each entry of a case whose row says the
// explorer fails it (or may), the share of its random scenes that break a
// rule: the chances of a miss that this library's comments compute come
// from it (`go test ./checker/library -run TestExploreRates -rates 200
// -rates-case 10`). Each entry is graded as TestVerdicts grades it, in
// its case's worker, with the explore check alone: a run plays scenes
// from a seed until the first that breaks a rule, whose number its figure
// names, and the next run starts from the scene after it.
func TestExploreRates(t *testing.T) {
	if *rates == 0 {
		t.Skip("run with -rates N")
	}
	r := root(t)
	c, ok := checker.Find(*ratesCase)
	require.True(t, ok, "no case %d", *ratesCase)
	for _, e := range entries[c.Number] {
		_, maybe := e.maybe["explore"]
		if !slices.Contains(e.fails, "explore") && !maybe {
			continue // the share its verdict rests on is a run's: 0 or 1
		}
		t.Run(e.dir, func(t *testing.T) {
			target := entryTarget(c, e)
			w, err := programs[c.Number].worker(r, c, target)
			require.NoError(t, err)
			played, broke := 0, 0
			var seeds []uint64
			for seed := uint64(1); played < *rates; {
				run := w.Check(context.Background(), "explore", grade.Options{Root: r, Seed: seed})
				v := run.Verdict
				if v.Pass {
					n := scenesOf(v.Figure)
					require.Positive(t, n, "a passing explore check that names no count of scenes: %q", v.Figure)
					played += n
					seed += uint64(n)
					continue
				}
				m := brokeAt.FindStringSubmatch(v.Figure)
				require.NotNil(t, m, "explore failed with no scene named: %s: %s", v.Figure, v.Message)
				k, _ := strconv.Atoi(m[1])
				played, broke = played+k, broke+1
				if len(seeds) < 5 {
					seeds = append(seeds, seed+uint64(k-1))
				}
				seed += uint64(k)
			}
			t.Logf("%s: %d of %d scenes break a rule (%.0f%%; seeds %v)", e.dir, broke, played, 100*float64(broke)/float64(played), seeds)
		})
	}
}

// scenesOf reads how many scenes a passing explore check played from its
// figure, whose first number it is ("24 fleet scenes, ...").
func scenesOf(figure string) int {
	var n int
	if _, err := fmt.Sscanf(figure, "%d", &n); err != nil {
		return 0
	}
	return n
}
