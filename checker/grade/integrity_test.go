package grade

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"stampede/checker"
	"stampede/checker/check"
)

// The tests in this file are the attacks of a student who wants the marks
// without the work (docs/design.md, "The threat model"). Each was a PASS
// before the grader checked what a case imports, signed its verdicts, and
// watched its children.

// gradeRefused grades a fixture that the lab must refuse to build, and
// checks that every check failed without running, naming each of want.
func gradeRefused(t *testing.T, name string, want ...string) {
	t.Helper()
	rep, err := Grade(context.Background(), fixture(name), Options{Root: root(t), Repeat: 1})
	require.NoError(t, err)
	require.NotNil(t, rep.Build, "%s was built", name)
	assert.True(t, rep.Build.Refused, "%s: %v", name, rep.Build.Lines)
	assert.Equal(t, "uses what a case may not", rep.Build.Problem())
	lines := strings.Join(rep.Build.Lines, "\n")
	for _, w := range want {
		assert.Contains(t, lines, w)
	}
	require.Len(t, rep.Results, len(rep.Target.Case.Checks))
	for _, r := range rep.Results {
		assert.Equal(t, check.Fail, r.Status, "check %s", r.ID)
		assert.Contains(t, r.Message, "not run: checker/grade/testdata/case01/"+name+" uses what a case may not")
	}
}

func TestForgedVerdictIsRefused(t *testing.T) {
	t.Parallel()
	gradeRefused(t, "forgeverdict", `checker/grade/testdata/case01/forgeverdict/shop.go:8: imports "os"`)
}

func TestForgedReportIsRefused(t *testing.T) {
	t.Parallel()
	gradeRefused(t, "forgereport", `forgereport/shop.go:9: imports "os"`, `forgereport/shop.go:10: imports "syscall"`)
}

func TestSilencedRaceIsRefused(t *testing.T) {
	t.Parallel()
	gradeRefused(t, "silencerace", `silencerace/shop.go:7: imports "os"`)
}

func TestFakeRaceUnavailableIsRefused(t *testing.T) {
	t.Parallel()
	gradeRefused(t, "fakerace", "fakerace/zz_race.go:1: a build constraint")
}

func TestReflectAndUnsafeAreRefused(t *testing.T) {
	t.Parallel()
	gradeRefused(t, "counterreset", `counterreset/shop.go:7: imports "reflect"`, `counterreset/shop.go:8: imports "unsafe"`,
		"can read and change the checker's own memory")
}

func TestStackSniffingIsRefused(t *testing.T) {
	t.Parallel()
	gradeRefused(t, "sniffstack", "sniffstack/shop.go:24: uses runtime.CallersFrames", "sniffstack/shop.go:24: uses runtime.Callers;")
}

func TestStartingProgramsIsRefused(t *testing.T) {
	t.Parallel()
	gradeRefused(t, "orphan", `orphan/shop.go:6: imports "os/exec"`)
}

func TestAnExtraPackageIsNamed(t *testing.T) {
	t.Parallel()
	gradeRefused(t, "extrapackage", "extrapackage/shop.go:3: says package extrapackage, but helpers.go says package helpers")
}

func TestPackageMainIsNamed(t *testing.T) {
	t.Parallel()
	gradeRefused(t, "packagemain", "packagemain/shop.go:2: says package main")
}

func TestExitIsRefused(t *testing.T) {
	t.Parallel()
	gradeRefused(t, "exits", `exits/shop.go:6: imports "os"`)
}

// gradeTrusting grades a fixture as if it had got past the import check:
// the grader's second line of defence.
func gradeTrusting(t *testing.T, name string, lim Limits) Report {
	t.Helper()
	rep, err := Grade(context.Background(), fixture(name), Options{Root: root(t), Repeat: 1, Limits: lim, trustImports: true})
	require.NoError(t, err)
	require.Nil(t, rep.Build, "%s does not compile", name)
	return rep
}

func result(t *testing.T, rep Report, id string) check.Result {
	t.Helper()
	for _, r := range rep.Results {
		if r.ID == id {
			return r
		}
	}
	t.Fatalf("no check %q", id)
	return check.Result{}
}

// TestAVerdictOnStandardOutputIsNotBelieved: a verdict written where the
// grader once read verdicts, or printed on standard output, is not the
// worker's signed verdict, and the code without a cache fails as it should.
func TestAVerdictOnStandardOutputIsNotBelieved(t *testing.T) {
	t.Parallel()
	rep := gradeTrusting(t, "forgeverdict", Limits{})
	once := result(t, rep, "once")
	assert.Equal(t, check.Fail, once.Status, "%s %s", once.Figure, once.Message)
	assert.Equal(t, "ran 50", once.Figure)
}

// TestASilencedRaceStillFails: with standard error closed, the race report
// never arrives, but the race detector's exit status does.
func TestASilencedRaceStillFails(t *testing.T) {
	t.Parallel()
	rep := gradeTrusting(t, "silencerace", Limits{})
	race := result(t, rep, "race")
	assert.Equal(t, check.Fail, race.Status)
	assert.Contains(t, race.Message, "its report did not reach the grader")
}

// TestAProgramStartedByTheCodeIsStopped: a child that the student's code
// starts is killed with the worker's process group.
func TestAProgramStartedByTheCodeIsStopped(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	t.Parallel()
	gradeTrusting(t, "orphan", Limits{})
	// SIGKILL is delivered at once but a loaded machine may take a moment
	// to end the process; the sleeper itself would live for an hour.
	var left []string
	for range 50 {
		if left = processesWith(t, "sleep\x003601.25"); len(left) == 0 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	assert.Empty(t, left, "a program the check started is still running")
}

// processesWith lists the processes whose command line holds cmdline.
func processesWith(t *testing.T, cmdline string) []string {
	t.Helper()
	paths, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	var found []string
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err == nil && strings.Contains(string(data), cmdline) {
			found = append(found, p)
		}
	}
	return found
}

// TestExitZeroIsNotAVerdict: a child that ends the program with status 0
// has said nothing.
func TestExitZeroIsNotAVerdict(t *testing.T) {
	t.Parallel()
	rep := gradeTrusting(t, "exitzero", Limits{})
	for _, r := range rep.Results {
		if r.ID == "race" {
			continue
		}
		assert.Equal(t, check.Fail, r.Status, r.ID)
		assert.Contains(t, r.Message, "the program ended (exit status 0) before the check gave its verdict", r.ID)
	}
}

func TestExitStatusIsTold(t *testing.T) {
	t.Parallel()
	rep := gradeTrusting(t, "exits", Limits{})
	assert.Contains(t, result(t, rep, "once").Message, "exited with status 3")
}

// TestAMemoryHogIsStoppedAndLocated stops a child past its memory bound
// (a small bound here, so that the test is safe on a small machine) and
// says where the memory went.
func TestAMemoryHogIsStoppedAndLocated(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("memory is watched through /proc")
	}
	t.Parallel()
	rep, err := Grade(context.Background(), fixture("hog"), Options{Root: root(t), Repeat: 1, Workers: 1,
		Limits: Limits{Memory: 256 << 20}})
	require.NoError(t, err)
	for _, r := range rep.Results {
		if r.ID == "race" {
			continue
		}
		assert.Equal(t, check.Fail, r.Status, r.ID)
		if r.ID == "explore" {
			// The explorer's scenes may be between visitors when the
			// bound is crossed; the bound itself must still be named.
			assert.Contains(t, r.Message, "the code used more than 256 MiB of memory", r.ID)
			continue
		}
		assert.Contains(t, r.Message, "the code used more than 256 MiB of memory at checker/grade/testdata/case01/hog/shop.go:", r.ID)
	}
}

// TestAGoroutineFloodIsStoppedAndLocated: the flood is told by its count
// of goroutines, not by the hang bound. With the default 5 s bound, a
// loaded machine (CI's unit step, two packages' tests side by side, on
// 5 December) met the bound while the fixture's visitors were still
// starting theirs, and the check said "still running" (a FAIL, but not
// this one): the bound here is a minute, so only the count can end it.
func TestAGoroutineFloodIsStoppedAndLocated(t *testing.T) {
	t.Parallel()
	rep, err := Grade(context.Background(), fixture("flood"), Options{Root: root(t), Repeat: 1, Limits: Limits{Hang: time.Minute}})
	require.NoError(t, err)
	once := result(t, rep, "once")
	assert.Equal(t, check.Fail, once.Status)
	assert.Contains(t, once.Message, "goroutines alive at once")
}

func TestGoexitIsNamed(t *testing.T) {
	t.Parallel()
	rep, err := Grade(context.Background(), fixture("goexit"), Options{Root: root(t), Repeat: 1})
	require.NoError(t, err)
	served := result(t, rep, "served")
	assert.Equal(t, check.Fail, served.Status)
	assert.Contains(t, served.Message, "the visitor's goroutine was ended (runtime.Goexit) at checker/grade/testdata/case01/goexit/shop.go:16")
}

// TestToolchainTroubleIsNotTheStudents: with no home folder, go build
// cannot find its cache; that is said as it is, not blamed on the case.
func TestToolchainTroubleIsNotTheStudents(t *testing.T) {
	for _, v := range []string{"HOME", "GOCACHE", "XDG_CACHE_HOME", "GOPATH", "GOMODCACHE"} {
		t.Setenv(v, "")
	}
	c, _ := checker.Find(1)
	_, err := Grade(context.Background(), Solution(c), Options{Root: root(t), Repeat: 1})
	var se *SetupError
	require.ErrorAs(t, err, &se)
	assert.Contains(t, se.Error(), "the Go toolchain could not build the lab here: go: ")
}

// TestTheImportListIsKeptByTheLab holds every shipped case, reference
// solution and library entry to its case's list: none of them may need
// what students are refused.
func TestTheImportListIsKeptByTheLab(t *testing.T) {
	r := root(t)
	for _, c := range checker.Cases() {
		dirs := []string{filepath.Join("cases", c.Dir()), filepath.Join("solutions", c.Dir())}
		lib, _ := filepath.Glob(filepath.Join(r, "checker", "library", c.Dir(), "*", "*", "shop.go"))
		shipped := filepath.Join(r, "checker", "library", c.Dir(), "shipped", "shop.go")
		for _, f := range append(lib, shipped) {
			rel, _ := filepath.Rel(r, filepath.Dir(f))
			dirs = append(dirs, rel)
		}
		for _, d := range dirs {
			refused, err := scan(filepath.Join(r, d), d, c)
			require.NoError(t, err, d)
			assert.Empty(t, refused, "%s", d)
		}
	}
}

func TestAllowedPatterns(t *testing.T) {
	for _, tc := range []struct {
		n    int
		path string
		ok   bool
	}{
		{1, "sync", true},
		{1, "sync/atomic", true},
		{1, "golang.org/x/sync/singleflight", true},
		{1, "stampede/shop/catalog", true},
		{1, "hash/fnv", true},
		{1, "os", false},
		{1, "os/exec", false},
		{1, "unsafe", false},
		{1, "reflect", false},
		{1, "runtime/debug", false},
		{1, "stampede/checker/harness", false},
		{1, "stampede/solutions/case01", false},
		{1, "github.com/redis/go-redis/v9", false},
		{1, "encoding/json", false},
		{6, "github.com/redis/go-redis/v9", true},
		{6, "crypto/rand", true},
		{6, "encoding/hex", true},
		{6, "net", false},
		{6, "syscall", false},
		{1, "synchronize", false},
	} {
		c, _ := checker.Find(tc.n)
		assert.Equal(t, tc.ok, allows(Allowed(c), tc.path), fmt.Sprintf("case %d, %s", tc.n, tc.path))
	}
}

// TestTheChapterIndexListsTheImports keeps docs/README.md's list of what a
// case may import in step with the list the grader enforces.
func TestTheChapterIndexListsTheImports(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(root(t), "docs", "README.md"))
	require.NoError(t, err)
	doc := string(data)
	for _, p := range append(append(slices.Clone(baseImports), redisImports...), runtimeAllowed...) {
		if slices.Contains(runtimeAllowed, p) {
			p = "runtime." + p
		}
		assert.Contains(t, doc, "`"+p+"`", "docs/README.md does not list %s", p)
	}
}
