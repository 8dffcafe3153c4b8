package grade

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"stampede/checker"
	"stampede/checker/check"
	"stampede/checker/stack"
)

// fixture is a piece of hostile student code in testdata/case01.
func fixture(name string) Target {
	c, _ := checker.Find(1)
	return Target{Case: c, Pkg: check.Module + "/checker/grade/testdata/case01/" + name}
}

func root(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("../..")
	require.NoError(t, err)
	return dir
}

// gradeFixture grades a fixture with a short hang bound and checks that
// every check failed with a message that contains each of want.
func gradeFixture(t *testing.T, name string, lim Limits, want ...string) Report {
	t.Helper()
	rep, err := Grade(context.Background(), fixture(name), Options{Root: root(t), Limits: lim})
	require.NoError(t, err)
	require.Len(t, rep.Results, len(rep.Target.Case.Checks))
	for _, r := range rep.Results {
		if r.ID == "race" {
			continue // the race check's own workload may fail first in another way
		}
		assert.Equal(t, check.Fail, r.Status, "check %s", r.ID)
		assert.NotContains(t, r.Message, "goroutine ", "a stack dump leaked into the verdict")
		if r.ID == "explore" || r.ID == "switches" {
			// The explorer tells its failure as the story of its smallest
			// scene, in words of its own; it must still name the file.
			assert.Contains(t, r.Message, "checker/grade/testdata/case01/"+name+"/shop.go", "check explore")
			continue
		}
		for _, w := range want {
			assert.Contains(t, r.Message, w, "check %s", r.ID)
		}
	}
	return rep
}

func TestPanicIsAFailWithTheStudentsLine(t *testing.T) {
	t.Parallel()
	gradeFixture(t, "panics", Limits{}, "panicked: boom: the shelf fell over",
		"at checker/grade/testdata/case01/panics/shop.go:15")
}

func TestDeadlockIsFoundAtOnceAndLocated(t *testing.T) {
	t.Parallel()
	// A long hang bound: the deadlock must be found by the settled
	// snapshots, not by running out of time.
	rep := gradeFixture(t, "deadlock", Limits{Hang: time.Minute},
		"1 visitor stuck at checker/grade/testdata/case01/deadlock/shop.go:20 in sync.Mutex.Lock")
	assert.Contains(t, rep.Results[0].Message, "deadlocked")
	assert.Contains(t, rep.Results[0].Message, "likely a lock that is never released")
	assert.Contains(t, rep.Results[0].Message, "49 visitors stuck at checker/grade/testdata/case01/deadlock/shop.go:19 in sync.Mutex.Lock")
}

// gradeHung grades a fixture whose code never stops: every check fails,
// the checks that ran say where, and the others say why they did not run.
func gradeHung(t *testing.T, name string, lim Limits, want ...string) {
	t.Helper()
	rep, err := Grade(context.Background(), fixture(name), Options{Root: root(t), Limits: lim})
	require.NoError(t, err)
	diagnosed := 0
	for _, r := range rep.Results {
		assert.Equal(t, check.Fail, r.Status, "check %s", r.ID)
		if strings.HasPrefix(r.Message, "not run: another check found code that never stops running") {
			continue
		}
		diagnosed++
		for _, w := range want {
			assert.Contains(t, r.Message, w, "check %s", r.ID)
		}
	}
	assert.Positive(t, diagnosed, "no check said where the code runs for ever")
}

func TestEndlessLoopIsStoppedAndLocated(t *testing.T) {
	t.Parallel()
	gradeHung(t, "spins", Limits{Hang: time.Second}, "still running after 1s",
		"still running near checker/grade/testdata/case01/spins/shop.go:", "likely a loop that never ends")
}

func TestFatalErrorIsAFailWithTheStudentsLine(t *testing.T) {
	t.Parallel()
	gradeFixture(t, "unlocktwice", Limits{}, "the program crashed: fatal error: sync: unlock of unlocked mutex",
		"at checker/grade/testdata/case01/unlocktwice/shop.go:20", "unlocked twice")
}

func TestPanicOnAStudentGoroutineCrashesOnlyTheChild(t *testing.T) {
	t.Parallel()
	gradeFixture(t, "goroutinepanic", Limits{}, "the program crashed: panic: assignment to entry in nil map",
		"at checker/grade/testdata/case01/goroutinepanic/shop.go:")
}

// TestKillBoundEndsTheChild runs alone (not in parallel), so that any
// worker still alive afterwards can only be its own.
func TestKillBoundEndsTheChild(t *testing.T) {
	began := time.Now()
	gradeHung(t, "spins", Limits{Hang: time.Hour, Kill: 2 * time.Second}, "stopped after 2s")
	assert.Less(t, time.Since(began), time.Minute)
	if runtime.GOOS == "linux" {
		assert.Empty(t, workersAlive(t), "a worker outlived its check")
	}
}

// workersAlive lists this process's children that are still running a
// worker binary. Other programs on the machine may run workers of their
// own; they are not this test's concern.
func workersAlive(t *testing.T) []string {
	t.Helper()
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var alive []string
	for _, stat := range stats {
		data, err := os.ReadFile(stat)
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: the comm may hold spaces, so read
		// from the last ")".
		fields := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
		if len(fields) < 2 || fields[1] != strconv.Itoa(os.Getpid()) {
			continue
		}
		exe, _ := os.Readlink(filepath.Join(filepath.Dir(stat), "exe"))
		if strings.Contains(exe, "stampede-worker-") {
			alive = append(alive, exe)
		}
	}
	return alive
}

func TestCompileErrorShowsTheCompilersLines(t *testing.T) {
	t.Parallel()
	rep, err := Grade(context.Background(), fixture("broken"), Options{Root: root(t)})
	require.NoError(t, err)
	require.NotNil(t, rep.Build)
	assert.False(t, rep.Build.Shape)
	assert.Contains(t, strings.Join(rep.Build.Lines, "\n"), "checker/grade/testdata/case01/broken/shop.go:15")
	for _, r := range rep.Results {
		assert.Equal(t, check.Fail, r.Status)
		assert.Contains(t, r.Message, "does not compile")
	}
}

func TestANameThatClashesWithThePointsIsGradedWithout(t *testing.T) {
	t.Parallel()
	w, err := Build(context.Background(), root(t), fixture("clashpoint"), true)
	require.NoError(t, err, "the student's file compiles: the grader's copy must not make it fail")
	defer w.Close()
	assert.Contains(t, w.NoPoints, "stampedepoint", "the worker says why it has no schedule points")
	run := w.Check(context.Background(), "once", Options{Root: root(t)})
	assert.True(t, run.Verdict.Pass, "%+v", run.Verdict)
	// The check of switches between statements had none to make: it
	// says so, and does not pass.
	run = w.Check(context.Background(), "switches", Options{Root: root(t)})
	assert.True(t, run.Verdict.Skipped, "%+v", run.Verdict)
	assert.Contains(t, run.Verdict.Message, "stampedepoint")
}

func TestWrongSignatureIsExplained(t *testing.T) {
	t.Parallel()
	rep, err := Grade(context.Background(), fixture("wrongsig"), Options{Root: root(t)})
	require.NoError(t, err)
	require.NotNil(t, rep.Build)
	assert.True(t, rep.Build.Shape)
	assert.Equal(t, "does not fit the checker", rep.Build.Problem())
	lines := strings.Join(rep.Build.Lines, "\n")
	assert.Contains(t, lines, "New must be: func New(db *catalog.DB) *Shop")
	assert.Contains(t, lines, "    is:      func New() *Shop")
	assert.NotContains(t, lines, "suite.Bind", "the checker's generics are not the student's business")
}

func TestMissingCaseSaysHowToStartAgain(t *testing.T) {
	t.Parallel()
	rep, err := Grade(context.Background(), fixture("nothere"), Options{Root: root(t)})
	require.NoError(t, err)
	require.NotNil(t, rep.Build)
	assert.True(t, rep.Build.Missing)
	assert.Equal(t, []string{"checker/grade/testdata/case01/nothere has no Go files. To start the case again: go run ./shop reset 1"}, rep.Build.Lines)
}

func TestABrokenCaseDoesNotStopAnother(t *testing.T) {
	t.Parallel()
	r := root(t)
	broken, err := Grade(context.Background(), fixture("broken"), Options{Root: r})
	require.NoError(t, err)
	require.NotNil(t, broken.Build)
	c, _ := checker.Find(1)
	sol, err := Grade(context.Background(), Solution(c), Options{Root: r})
	require.NoError(t, err)
	assert.True(t, sol.Passed())
}

func TestRepeatFoldsRuns(t *testing.T) {
	t.Parallel()
	in := check.Info{ID: "x", Name: "x"}
	pass := Run{Verdict: check.Passed("ran 1")}
	fail := Run{Verdict: check.Failed("ran 2", "twice")}
	assert.Equal(t, check.Pass, fold(in, []Run{pass, pass, pass}).Status)
	assert.Equal(t, check.Fail, fold(in, []Run{fail, fail}).Status)
	got := fold(in, []Run{pass, fail, pass})
	assert.Equal(t, check.Flaky, got.Status)
	assert.Equal(t, 2, got.Passed)
	assert.Equal(t, "ran 2", got.Figure, "the figure of the failing run is the one to show")
}

// A check played in parts passes a run when every part passes, with their
// figures; a part that fails fails the run, never making it flaky.
func TestPartsOfARunAreJoined(t *testing.T) {
	t.Parallel()
	in := check.Info{ID: "x", Name: "x", Scenes: true, Parts: 2}
	p1, p2 := Run{Verdict: check.Passed("part 1: 3 schedules")}, Run{Verdict: check.Passed("part 2: 4 schedules")}
	fail := Run{Verdict: check.Failed("scene 2 broke", "why")}
	got := fold(in, []Run{p1, p2})
	assert.Equal(t, check.Pass, got.Status)
	assert.Equal(t, 1, got.Runs, "two parts are one run")
	assert.Equal(t, "part 1: 3 schedules; part 2: 4 schedules", got.Figure)
	got = fold(in, []Run{p1, fail})
	assert.Equal(t, check.Fail, got.Status)
	assert.Equal(t, "scene 2 broke", got.Figure)
	assert.Equal(t, check.Flaky, fold(in, []Run{p1, p2, fail, p2}).Status, "two runs of two parts: one passed, one failed")
	assert.Equal(t, 6, in.RunsOf(7)*in.PartsOf(), "three runs for seven of a check that varies, each in two parts")
}

// A run whose scene did not happen tested nothing: the check is judged by
// the runs that did, and skipped, with the reason, when none did.
func TestSkippedRunsAreNoEvidence(t *testing.T) {
	t.Parallel()
	in := check.Info{ID: "x", Name: "x"}
	pass := Run{Verdict: check.Passed("ran 1")}
	fail := Run{Verdict: check.Failed("ran 2", "twice")}
	skip := Run{Verdict: check.Skipped("not staged: the page went in a pipeline")}
	got := fold(in, []Run{skip, skip})
	assert.Equal(t, check.Skip, got.Status)
	assert.Equal(t, "not staged: the page went in a pipeline", got.Message)
	assert.Equal(t, check.Pass, fold(in, []Run{skip, pass, skip}).Status)
	assert.Equal(t, check.Fail, fold(in, []Run{skip, fail}).Status, "a skipped run does not make a failure flaky")
	assert.Equal(t, check.Flaky, fold(in, []Run{pass, skip, fail}).Status)
}

// After a check hangs, the runs not yet started are skipped. They are no
// evidence of a bug that shows only sometimes, so they never make a check
// FLAKY; they leave it unproven, a FAIL that says it was not run.
func TestRunsNotStartedAreNoEvidence(t *testing.T) {
	t.Parallel()
	in := check.Info{ID: "x", Name: "x"}
	pass := Run{Verdict: check.Passed("ran 1")}
	fail := Run{Verdict: check.Failed("ran 2", "twice")}
	skipped := Run{NotRun: "not run: another check hung"}

	got := fold(in, []Run{pass, skipped, skipped})
	assert.Equal(t, check.Fail, got.Status)
	assert.True(t, got.NotRun)
	assert.Equal(t, "passed 1 of 3 runs, then not run: another check hung", got.Message)

	got = fold(in, []Run{skipped, skipped})
	assert.Equal(t, check.Fail, got.Status)
	assert.True(t, got.NotRun)
	assert.Equal(t, "not run: another check hung", got.Message)

	// A run that failed is a verdict on the code, whatever was not run.
	got = fold(in, []Run{fail, skipped})
	assert.Equal(t, check.Fail, got.Status)
	assert.False(t, got.NotRun)
	assert.Equal(t, "ran 2", got.Figure)
	got = fold(in, []Run{pass, fail, skipped})
	assert.Equal(t, check.Flaky, got.Status)
	assert.Contains(t, got.Message, "passed 1 of 2 runs")
}

// The report's lines are handed on in the case's order, each once every
// run of it and of the checks before it is in; the race check, decided by
// every run, waits for the end when no run finds a race, and holds back
// no line after it.
func TestResultsAreHandedOnInTheCasesOrder(t *testing.T) {
	t.Parallel()
	checks := []check.Info{{ID: "a"}, {ID: "b"}, {ID: "race", Race: true}, {ID: "explore", Scenes: true}}
	runs := [][]Run{make([]Run, 2), make([]Run, 2), make([]Run, 2), make([]Run, 1)}
	var got []string
	o := inOrder{checks: checks, runs: runs, left: []int{2, 2, 2, 1}, handed: make([]bool, 4),
		decided:  func(r check.Result) { got = append(got, r.ID) },
		raceFail: func(in check.Info, _ raceLog, _ int) check.Result { return check.Result{ID: in.ID} }}
	pass := Run{Verdict: check.Passed("")}
	o.done(1, 0, pass)
	o.done(1, 1, pass)
	assert.Empty(t, got, "b waits for a")
	o.done(0, 0, pass)
	assert.Empty(t, got, "a has a run out")
	o.done(0, 1, Run{Verdict: check.Failed("", "no")})
	assert.Equal(t, []string{"a", "b"}, got)
	o.done(3, 0, pass)
	assert.Equal(t, []string{"a", "b", "explore"}, got, "explore does not wait for the race check")
	o.done(2, 0, pass)
	o.done(2, 1, pass)
	assert.Equal(t, []string{"a", "b", "explore"}, got, "with no race found, the race check waits for the end")
	results := []check.Result{{ID: "a"}, {ID: "b"}, {ID: "race"}, {ID: "explore"}}
	o.finish(results)
	assert.Equal(t, []string{"a", "b", "explore", "race"}, got, "each line once")
}

// A race is a FAIL no later run can undo: the race check's line comes the
// moment a run finds one, ahead of the lines still out, with the races
// found so far, and only once.
func TestTheRaceCheckFailsTheMomentARunFindsARace(t *testing.T) {
	t.Parallel()
	w := &Worker{Target: Target{Case: check.Case{Number: 4}}}
	checks := []check.Info{{ID: "a"}, {ID: "race", Race: true}, {ID: "b"}}
	runs := [][]Run{make([]Run, 2), make([]Run, 2), make([]Run, 2)}
	var got []check.Result
	o := inOrder{checks: checks, runs: runs, left: []int{2, 2, 2}, handed: make([]bool, 3),
		decided: func(r check.Result) { got = append(got, r) },
		raceFail: func(in check.Info, log raceLog, out int) check.Result {
			r := w.raceResult(in, check.Result{}, log.races, log.hidden, false)
			if out > 0 {
				r.Figure += " so far"
			}
			return r
		}}
	racy := Run{Verdict: check.Passed(""), Races: []stack.Race{{Access: "write", Previous: "read"}}}
	o.done(2, 0, racy)
	if assert.Len(t, got, 1, "the race check does not wait for a, nor for b's second run") {
		assert.Equal(t, "race", got[0].ID)
		assert.Equal(t, check.Fail, got[0].Status)
		assert.Equal(t, "1 race(s) so far", got[0].Figure)
	}
	o.done(0, 0, racy)
	o.done(0, 1, Run{Verdict: check.Passed(""), HiddenRace: true})
	o.done(1, 0, Run{Verdict: check.Passed("")})
	o.done(1, 1, Run{Verdict: check.Passed("")})
	o.done(2, 1, Run{Verdict: check.Passed("")})
	o.finish([]check.Result{{ID: "a"}, {ID: "race"}, {ID: "b"}})
	var ids []string
	for _, r := range got {
		ids = append(ids, r.ID)
	}
	assert.Equal(t, []string{"race", "a", "b"}, ids, "the race check once, and the others in order")
}

// Without the race detector the race check is a SKIP, known only at the
// end: a run's race (impossible then) decides nothing early.
func TestWithoutTheRaceDetectorTheRaceCheckComesAtTheEnd(t *testing.T) {
	t.Parallel()
	checks := []check.Info{{ID: "race", Race: true}, {ID: "b"}}
	runs := [][]Run{make([]Run, 1), make([]Run, 1)}
	var got []string
	o := inOrder{checks: checks, runs: runs, left: []int{1, 1}, handed: make([]bool, 2),
		decided: func(r check.Result) { got = append(got, r.ID) }}
	o.done(1, 0, Run{Verdict: check.Passed(""), HiddenRace: true})
	o.done(0, 0, Run{Verdict: check.Passed("")})
	assert.Equal(t, []string{"b"}, got)
	o.finish([]check.Result{{ID: "race"}, {ID: "b"}})
	assert.Equal(t, []string{"b", "race"}, got)
}

// The first check's runs start first, so that the report's first line
// comes early; then the explorers', the longest; then the rest in order.
func TestRunOrderStartsTheFirstLineThenTheExplorers(t *testing.T) {
	t.Parallel()
	checks := []check.Info{{ID: "a"}, {ID: "b"}, {ID: "switches", Scenes: true}, {ID: "c"}, {ID: "explore", Scenes: true}}
	assert.Equal(t, []int{0, 2, 4, 1, 3}, runOrder(checks))
	checks[0].Scenes = true
	assert.Equal(t, []int{0, 2, 4, 1, 3}, runOrder(checks), "a first check that is an explorer is started with them")
	assert.Empty(t, runOrder(nil))
}

func TestRaceIsNamedByItsTwoLines(t *testing.T) {
	t.Parallel()
	c, _ := checker.Find(1)
	target := Target{Case: c, Pkg: check.Module + "/checker/grade/testdata/case01/unguardedread"}
	rep, err := Grade(context.Background(), target, Options{Root: root(t)})
	require.NoError(t, err)
	race := result(t, rep, "race")
	assert.Equal(t, check.Fail, race.Status)
	file := "checker/grade/testdata/case01/unguardedread/shop.go"
	// The unguarded looks read at lines 29 and 42; the fill writes at 50.
	assert.Regexp(t, `race: (write at `+file+`:50 against read at `+file+`:(29|42)|read at `+file+`:(29|42) against write at `+file+`:50)`, race.Message)
	assert.Contains(t, race.Detail, "WARNING: DATA RACE", "the whole report is kept for --verbose")
}

// TestNoCgoMeansARaceSkip builds without cgo, as on a machine with no C
// compiler: the race check is skipped with a reason, the rest are graded.
func TestNoCgoMeansARaceSkip(t *testing.T) {
	t.Setenv("CGO_ENABLED", "0")
	c, _ := checker.Find(1)
	rep, err := Grade(context.Background(), Solution(c), Options{Root: root(t), Repeat: 1})
	require.NoError(t, err)
	assert.Contains(t, rep.NoRace, "cgo")
	for _, r := range rep.Results {
		want := check.Pass
		if r.ID == "race" {
			want = check.Skip
			assert.Contains(t, r.Message, "race detector")
		}
		assert.Equal(t, want, r.Status, r.ID)
	}
	assert.True(t, rep.Passed(), "a skipped check does not fail the case")
}

// TestPrintingIsNotADeadlock grades correct code that prints a great deal:
// goroutines queued on a file's lock are waiting for I/O, not deadlocked.
func TestPrintingIsNotADeadlock(t *testing.T) {
	t.Parallel()
	target := fixture("printer")
	// Case 1 has no check that varies: say one does, for its count.
	target.Case.Checks = slices.Clone(target.Case.Checks)
	target.Case.Checks[0].Varies = true
	rep, err := Grade(context.Background(), target, Options{Root: root(t), Repeat: 4})
	require.NoError(t, err)
	c := target.Case
	for _, r := range rep.Results {
		assert.Equal(t, check.Pass, r.Status, "%s: %s", r.ID, r.Message)
		// Asked for four runs, a check that varies runs four times, and
		// every other check twice (check.Info.RunsOf).
		in, ok := c.Check(r.ID)
		require.True(t, ok, r.ID)
		want := 2
		if in.Varies {
			want = 4
		}
		assert.Equal(t, want, r.Runs, "%s", r.ID)
	}
}

func TestStoryDeadlockIsDiagnosed(t *testing.T) {
	t.Parallel()
	w, err := Build(context.Background(), root(t), fixture("deadlock"), true)
	require.NoError(t, err)
	defer w.Close()
	var out strings.Builder
	err = w.Play(context.Background(), nil, &out, time.Minute)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the story stopped: deadlocked")
	assert.Contains(t, err.Error(), "stuck at checker/grade/testdata/case01/deadlock/shop.go:19 in sync.Mutex.Lock")
}

func TestStoryFlagMistakeIsAUsageError(t *testing.T) {
	t.Parallel()
	c, _ := checker.Find(1)
	w, err := Build(context.Background(), root(t), Solution(c), true)
	require.NoError(t, err)
	defer w.Close()
	var ue *UsageError
	err = w.Play(context.Background(), []string{"--nope"}, io.Discard, time.Minute)
	require.ErrorAs(t, err, &ue)
	assert.Equal(t, "flag provided but not defined: -nope", ue.Msg)
	err = w.Play(context.Background(), []string{"--visitors", "0"}, io.Discard, time.Minute)
	require.ErrorAs(t, err, &ue)
}

// TestSequentialQueriesAreToldApart gives the missing second look its own
// diagnosis: the lock works, the waiters query again one after another.
func TestSequentialQueriesAreToldApart(t *testing.T) {
	t.Parallel()
	c, _ := checker.Find(1)
	rep, err := Grade(context.Background(), Target{Case: c, Pkg: check.Module + "/checker/grade/testdata/case01/nosecondlook"},
		Options{Root: root(t), Repeat: 1})
	require.NoError(t, err)
	once := rep.Results[1]
	require.Equal(t, "once", once.ID)
	assert.Equal(t, "ran 50", once.Figure)
	assert.Contains(t, once.Message, "one after another")

	shipped, err := Grade(context.Background(), Student(c), Options{Root: root(t), Repeat: 1})
	require.NoError(t, err)
	if shipped.Results[1].Figure == "ran 50" { // cases/case01 as shipped
		assert.NotContains(t, shipped.Results[1].Message, "one after another", "the stampede queries side by side")
	}
}

// Two processes started alike must not draw one same value; a failure in
// either is the verdict.
func TestApartComparesTwoProcesses(t *testing.T) {
	t.Parallel()
	a := &check.Apart{What: "lock token", Fix: "use crypto/rand"}
	drew := func(vals ...string) Run {
		v := check.Passed("3 locks taken")
		v.Drawn = vals
		return Run{Verdict: v}
	}
	got := apart(a, [2]Run{drew("x", "y"), drew("z", "w")})
	assert.True(t, got.Verdict.Pass)
	assert.Equal(t, "3 locks taken; two processes, no lock token in common", got.Verdict.Figure)

	got = apart(a, [2]Run{drew("x", "y"), drew("q", "y")})
	assert.False(t, got.Verdict.Pass)
	assert.Contains(t, got.Verdict.Message, `both drew the lock token "y"`)
	assert.Contains(t, got.Verdict.Message, "use crypto/rand")

	fail := Run{Verdict: check.Failed("no lock", "there is no lock"), Races: []stack.Race{{}}}
	got = apart(a, [2]Run{drew("x"), fail})
	assert.Equal(t, "no lock", got.Verdict.Figure)
	assert.Len(t, got.Races, 1, "races of both processes count")

	assert.True(t, apart(a, [2]Run{drew(), drew()}).Verdict.Pass, "values the server made are not the processes' to compare")
}

// Delays drawn to the millisecond repeat by chance across two processes; a
// generator seeded alike repeats nearly all of them, even when one process
// drew a few more or fewer before the scene.
func TestApartWithAShareToleratesChance(t *testing.T) {
	t.Parallel()
	a := &check.Apart{What: "come-back delay", Harm: "their crowds come back at once", Fix: "seed from crypto/rand", Share: 0.5}
	drew := func(from, n int) Run {
		v := check.Passed("40 told 0.5 s to 1.5 s")
		for i := from; i < from+n; i++ {
			v.Drawn = append(v.Drawn, strconv.Itoa(1000+i))
		}
		return Run{Verdict: v}
	}
	got := apart(a, [2]Run{drew(0, 40), drew(35, 40)})
	assert.True(t, got.Verdict.Pass, "5 of 40 in common is chance")
	assert.Equal(t, "40 told 0.5 s to 1.5 s; two processes, 5 of 40 come-back delays in common", got.Verdict.Figure)

	got = apart(a, [2]Run{drew(0, 40), drew(3, 40)})
	assert.False(t, got.Verdict.Pass, "a generator seeded alike, three draws apart")
	assert.Equal(t, "37 of 40 come-back delays the same", got.Verdict.Figure)
	assert.Contains(t, got.Verdict.Message, "their crowds come back at once")
	assert.Contains(t, got.Verdict.Message, "seed from crypto/rand")

	got = apart(a, [2]Run{drew(0, 40), drew(20, 40)})
	assert.False(t, got.Verdict.Pass, "half is the bound, and fails")
}

// TestSharedWorkerGradesEachTargetAsItsOwn links two implementations of
// case 1 into one program: each gets the verdicts it gets alone, its
// crash is its own and names its own file, and a target the lab refuses
// keeps the whole program from being built, in that target's words.
func TestSharedWorkerGradesEachTargetAsItsOwn(t *testing.T) {
	t.Parallel()
	c, _ := checker.Find(1)
	ctx := context.Background()
	ws, err := BuildShared(ctx, root(t), []Target{Solution(c), fixture("panics")}, true)
	require.NoError(t, err)
	require.Len(t, ws, 2)
	defer func() {
		for _, w := range ws {
			w.Close()
		}
	}()
	sol, err := ws[0].Grade(ctx, Options{Root: root(t)})
	require.NoError(t, err)
	assert.True(t, sol.Passed(), "the solution, linked beside another target: %+v", sol.Results)
	bad, err := ws[1].Grade(ctx, Options{Root: root(t)})
	require.NoError(t, err)
	for _, r := range bad.Results {
		if r.ID == "race" || r.ID == "explore" {
			continue
		}
		assert.Equal(t, check.Fail, r.Status, "check %s", r.ID)
		assert.Contains(t, r.Message, "at checker/grade/testdata/case01/panics/shop.go:15", "check %s", r.ID)
	}

	// The program goes with the last of its workers.
	dir := ws[0].prog.tmp
	require.NoError(t, ws[0].Close())
	assert.DirExists(t, dir)
	require.NoError(t, ws[1].Close())
	assert.NoDirExists(t, dir)
	ws = nil

	_, err = BuildShared(ctx, root(t), []Target{Solution(c), fixture("sniffstack")}, true)
	var be *BuildError
	require.ErrorAs(t, err, &be)
	assert.True(t, be.Refused)
	assert.Equal(t, fixture("sniffstack").Pkg, be.Target.Pkg)

	_, err = BuildShared(ctx, root(t), []Target{Solution(c), fixture("broken")}, true)
	require.ErrorAs(t, err, &be)
	assert.Equal(t, fixture("broken").Pkg, be.Target.Pkg, "the target that does not compile is named")
}

// A target kept outside the lab (Target.Src) is linked beside others under
// an import path whose folder does not exist, as the library's wrong
// entries are: its files are laid there, and its diagnoses name that path.
func TestSharedWorkerLaysEachTargetsSource(t *testing.T) {
	t.Parallel()
	c, _ := checker.Find(1)
	ctx := context.Background()
	away := Target{Case: c, Pkg: check.Module + "/checker/grade/testdata/case01/nowhere", Src: filepath.Join(root(t), "checker/grade/testdata/case01/panics")}
	ws, err := BuildShared(ctx, root(t), []Target{Solution(c), away}, true)
	require.NoError(t, err)
	defer func() {
		for _, w := range ws {
			w.Close()
		}
	}()
	res, err := ws[1].Grade(ctx, Options{Root: root(t), Only: func(i check.Info) bool { return i.ID != "race" && i.ID != "explore" }})
	require.NoError(t, err)
	require.NotEmpty(t, res.Results)
	for _, r := range res.Results {
		assert.Equal(t, check.Fail, r.Status, "check %s", r.ID)
		assert.Contains(t, r.Message, "at checker/grade/testdata/case01/nowhere/shop.go:15", "check %s", r.ID)
	}
}

// TestAChildGetsOneProcessorAndNoStaleKey: a check's child runs on one
// processor whatever the grader's own GOMAXPROCS, and sees the verdict key
// it is handed, never one left in the grader's environment.
func TestAChildGetsOneProcessorAndNoStaleKey(t *testing.T) {
	t.Setenv("GOMAXPROCS", "8")
	t.Setenv(verdictKey, "stale")
	t.Setenv("GORACE", "halt_on_error=1")
	env := childEnv(verdictKey+"=fresh", fmt.Sprintf("GOMAXPROCS=%d", checkProcs))
	count := func(prefix string) (n int, last string) {
		for _, kv := range env {
			if strings.HasPrefix(kv, prefix) {
				n, last = n+1, kv
			}
		}
		return n, last
	}
	for name, want := range map[string]string{
		"GOMAXPROCS=":    "GOMAXPROCS=1",
		verdictKey + "=": verdictKey + "=fresh",
		"GORACE=":        fmt.Sprintf("GORACE=exitcode=%d atexit_sleep_ms=0 history_size=3", raceExit),
	} {
		n, last := count(name)
		assert.Equal(t, 1, n, "%s is set once", name)
		assert.Equal(t, want, last)
	}
	// A story is the student's program as it runs: the machine's processors.
	story := childEnv()
	for _, kv := range story {
		assert.NotEqual(t, verdictKey+"=stale", kv, "a story never sees a verdict key")
	}
	assert.Contains(t, story, "GOMAXPROCS=8", "a story runs with the grader's own setting")
}
