// Package exploretest proves an explorer fair, as net/http/httptest
// serves the tests of HTTP code: every right answer of a case (its
// reference solution and each known-right entry of the library) must
// pass every scene. A case's explorer tests list their right answers and
// call Prove; `make proof` plays 1,000 scenes each, in batches.
package exploretest

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"stampede/checker/check"
	"stampede/checker/harness"
)

// Answer is one right answer and its explorer.
type Answer struct {
	// Pkg is the answer's package below the module, as stacks show it:
	// "solutions/case09", "checker/library/case09/right/early".
	Pkg string
	// Run plays n scenes from seed on it (an explore.Explorer's Run).
	Run func(h *harness.H, seed uint64, n int) check.Verdict
}

// Prove plays n scenes from seed on each answer, each in a subtest named
// by its package: none may break a rule. (Not in parallel: settling waits
// for the whole process.)
func Prove(t *testing.T, seed uint64, n int, answers ...Answer) {
	t.Helper()
	if testing.Short() {
		t.Skip("plays scenes on every right answer")
	}
	for _, a := range answers {
		t.Run(a.Pkg, func(t *testing.T) {
			h := harness.New(context.Background(), check.Module+"/"+a.Pkg, harness.DefaultBound)
			began := time.Now()
			v := a.Run(h, seed, n)
			if !v.Pass {
				t.Fatalf("%s: %s", v.Figure, v.Message)
			}
			t.Logf("%s in %v", v.Figure, time.Since(began).Round(time.Millisecond))
		})
	}
}

// Every holds answers to the library: the reference solution of each case
// numbered and every known-right entry of its library are among them. A
// right answer left off is proved only by the library's one run of the
// check. library is the test's path to checker/library.
func Every(t *testing.T, library string, cases []int, answers ...Answer) {
	t.Helper()
	listed := map[string]bool{}
	for _, a := range answers {
		listed[a.Pkg] = true
	}
	for _, n := range cases {
		sol := fmt.Sprintf("solutions/case%02d", n)
		if !listed[sol] {
			t.Errorf("%s is not among the right answers the explorer's test proves", sol)
		}
		dirs, err := filepath.Glob(filepath.Join(library, fmt.Sprintf("case%02d", n), "right", "*"))
		if err != nil || len(dirs) == 0 {
			t.Errorf("case %d has no known-right entries in %s", n, library)
		}
		for _, d := range dirs {
			if strings.HasSuffix(d, ".patch") {
				continue // a patch on the reference: proved with it
			}
			pkg := "checker/library/" + strings.TrimPrefix(filepath.ToSlash(d), filepath.ToSlash(library)+"/")
			if !listed[pkg] {
				t.Errorf("%s is a known-right entry, but the explorer's test does not prove it", pkg)
			}
		}
	}
}

// Flags defines the flags of a case's explorer tests: -scenes, how many
// scenes each right answer must pass in a row (n unless given; `make
// proof` plays 1,000), and -seed, the seed of the first. Call it in a
// package-level var, as flag.Int is called.
func Flags(n int) (scenes *int, seed *uint64) {
	return flag.Int("scenes", n, "how many explorer scenes each right answer must pass in a row (make proof plays 1,000)"),
		flag.Uint64("seed", 1, "the seed of the first scene")
}

// Fails holds an explorer to catching a wrong answer, the shipped code of
// its case: run, on the answer's package pkg (below the module), must
// break a rule within n scenes from seed 1 and say how to replay it
// (--seed). It plays whole scenes on fleets, so -short skips it.
func Fails(t *testing.T, pkg string, run func(h *harness.H, seed uint64, n int) check.Verdict, n int) {
	t.Helper()
	if testing.Short() {
		t.Skip("plays whole scenes")
	}
	h := harness.New(context.Background(), check.Module+"/"+pkg, harness.DefaultBound)
	v := run(h, 1, n)
	if v.Pass {
		t.Fatalf("%s passed %d scenes: %s", pkg, n, v.Figure)
	}
	if !strings.Contains(v.Message, "--seed") {
		t.Errorf("the failure names no seed to replay it: %s", v.Message)
	}
	t.Logf("%s: %s", v.Figure, v.Message)
}
