package library

import (
	"context"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"stampede/checker"
	"stampede/checker/check"
	"stampede/checker/fleet"
	"stampede/checker/grade"
	"stampede/checker/library/patch"
)

// entry is one answer of the library and the verdict it must get.
type entry struct {
	dir   string            // below checker/library/caseNN
	fails []string          // the checks it must fail, every run
	skips []string          // the checks whose scene it never lets happen: SKIP, every run
	maybe map[string]string // checks whose verdict depends on the schedule, and why
	// says holds, for some of the checks it fails, a part of the failure's
	// message: the reason the check names, where a check can fail an
	// entry for more than one.
	says map[string]string
	// hangs is set for an entry one of whose failed checks meets the hang
	// bound: the grader then starts no more checks, and which had started
	// by then is the machine's timing. Each check its row names neither as
	// failed nor as skipped must then PASS or be not run; a FAIL of its
	// own still fails the test.
	hangs bool
	// server is the entry's verdicts on a real Redis server where they
	// differ from the embedded one's (.ci/redis.sh --all): more checks
	// that fail there, and skip, and why.
	server *onServer
}

// onServer is how a real server's verdicts differ from the embedded
// server's for one entry.
type onServer struct {
	fails, skips []string
	// passes are checks the row fails that pass on a real server, where
	// the scene that fails them is not played.
	passes []string
	why    string
	// others, when set, says why the entry's checks that its row names
	// neither as failed nor as skipped may fail on a real server, now and
	// then: there they are logged, not held (an entry that talks to the
	// whole server, where checks run side by side).
	others string
}

// entries holds each case's library, filled by the caseNN_test.go files.
var entries = map[int][]entry{}

// register adds a case's library to entries.
func register(n int, es ...entry) bool {
	entries[n] = append(entries[n], es...)
	return true
}

// repeat is how many times each check runs per entry. Every check decides
// by counts, gates and settled states, so one run proves an entry's
// verdict; `make proof` runs each three times (as `shop check` does by
// default), to show that every verdict holds in every run, not once by
// luck.
var repeat = flag.Int("repeat", 1, "runs of each check of each entry")

// every runs every check of every entry. Without it, two kinds of run are
// left out, and `make proof`, which sets it, plays them:
//   - a known-wrong entry's checks that its row names neither as failed
//     nor as skipped: their verdict there (PASS: that check does not
//     catch this mistake) says nothing about a check's power, which the
//     failed checks prove, nor about its fairness, which the reference
//     solutions and the known-right entries prove on every check. They
//     were two thirds of the library's processor time. `make proof` holds
//     them to PASS, so that a check that starts to fail for a reason
//     other than the one it names still shows;
//   - a check an entry's row marks maybe: its verdict depends on the
//     schedule, so the test only logs it and one run proves nothing. Those
//     runs, and the hang bounds they met, were a quarter of the library's
//     processor time. An entry that must fail the race check keeps them:
//     that check's verdict is the races every run of every check saw.
var every = flag.Bool("every", false, "run every check of every entry, the explorers too")

// TestMain writes out the entries that are a change to a base, and
// removes them and the case's shared worker programs once every test has
// graded what it needs.
func TestMain(m *testing.M) {
	flag.Parse()
	dir, err := os.MkdirTemp("", "stampede-library-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	patched = applyAll("../..", dir)
	code := m.Run()
	for _, p := range programs {
		p.close()
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// applied is one entry written as its change to a base: the folder its
// files were written to, or why they could not be.
type applied struct {
	src string
	err error
}

// patched holds the entries written as a change to a base, by their
// folder below checker/library ("case06/wrong/plaindel"), as TestMain
// applied them.
var patched map[string]applied

// applyAll applies every entry file (caseNN/wrong/NAME.patch, and
// caseNN/right/NAME.patch) to its base
// in the module at root, and writes each entry's files to a folder of its
// own below dir.
func applyAll(root, dir string) map[string]applied {
	out := map[string]applied{}
	files, _ := filepath.Glob("case*/*/*.patch")
	for _, f := range files {
		name := strings.TrimSuffix(filepath.ToSlash(f), ".patch")
		src := filepath.Join(dir, filepath.FromSlash(name))
		out[name] = applied{src: src, err: applyOne(root, f, src)}
	}
	return out
}

// applyOne applies the entry file f and writes the entry's files to src.
func applyOne(root, f, src string) error {
	e, err := patch.Read(f)
	if err != nil {
		return err
	}
	base := map[string]string{}
	names, _ := filepath.Glob(filepath.Join(root, filepath.FromSlash(e.Base), "*.go"))
	for _, n := range names {
		if strings.HasSuffix(n, "_test.go") {
			continue
		}
		b, err := os.ReadFile(n)
		if err != nil {
			return err
		}
		base[filepath.Base(n)] = string(b)
	}
	if len(base) == 0 {
		return fmt.Errorf("%s: its base %s has no Go files", f, e.Base)
	}
	files, err := e.Apply(base)
	if err != nil {
		return fmt.Errorf("%s does not apply: %w", f, err)
	}
	if err := os.MkdirAll(src, 0o755); err != nil {
		return err
	}
	for n, text := range files {
		if err := os.WriteFile(filepath.Join(src, n), []byte(text), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// program is one worker program for a whole case: its shipped code, its
// solution and every entry of its library linked in, each graded as a
// worker of its own would grade it (grade.BuildShared). It saves a link
// per entry, most of what building a worker costs.
type program struct {
	once    sync.Once
	workers map[string]*grade.Worker // by import path
	err     error
}

// programs holds each case's program, built the first time one of the
// case's targets is graded.
var programs = map[int]*program{}

func init() {
	for _, c := range checker.Cases() {
		programs[c.Number] = &program{}
	}
}

// worker returns target's worker from its case's program.
func (p *program) worker(root string, c check.Case, target grade.Target) (*grade.Worker, error) {
	p.once.Do(func() {
		targets := []grade.Target{grade.Solution(c)}
		for _, e := range entries[c.Number] {
			if a, ok := patched[c.Dir()+"/"+e.dir]; ok && a.err != nil {
				continue // its own test says why
			}
			targets = append(targets, entryTarget(c, e))
		}
		ws, err := grade.BuildShared(context.Background(), root, targets, true)
		p.workers, p.err = map[string]*grade.Worker{}, err
		for _, w := range ws {
			p.workers[w.Target.Pkg] = w
		}
	})
	if p.err != nil {
		return nil, p.err
	}
	w, ok := p.workers[target.Pkg]
	if !ok {
		return nil, fmt.Errorf("%s is not in case %d's program", target.Pkg, c.Number)
	}
	return w, nil
}

func (p *program) close() {
	for _, w := range p.workers {
		w.Close()
	}
}

// entryTarget is the entry as the grader builds it: its own folder, or,
// for an entry written as its change to a base, the files TestMain made
// of it, laid where its folder would be.
func entryTarget(c check.Case, e entry) grade.Target {
	t := grade.Target{Case: c, Pkg: fmt.Sprintf("%s/checker/library/%s/%s", check.Module, c.Dir(), e.dir)}
	if a, ok := patched[c.Dir()+"/"+e.dir]; ok {
		t.Src = a.src
	}
	return t
}

func root(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("../..")
	require.NoError(t, err)
	require.FileExists(t, filepath.Join(dir, "go.mod"))
	return dir
}

// TestVerdicts grades every entry of the library and holds each check to
// the verdict written beside the entry: FAIL where listed, PASS elsewhere.
func TestVerdicts(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a worker per entry")
	}
	r := root(t)
	for _, c := range checker.Cases() {
		for _, e := range entries[c.Number] {
			t.Run(fmt.Sprintf("case%02d/%s", c.Number, e.dir), func(t *testing.T) {
				t.Parallel()
				expect(t, r, entryTarget(c, e), e)
			})
		}
	}
}

// TestSolutions grades every reference solution: each must pass every check.
func TestSolutions(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a worker per case")
	}
	r := root(t)
	for _, c := range checker.Cases() {
		t.Run(c.Dir(), func(t *testing.T) {
			t.Parallel()
			expect(t, r, grade.Solution(c), entry{})
		})
	}
}

func expect(t *testing.T, root string, target grade.Target, e entry) {
	t.Helper()
	if a, ok := patched[target.Case.Dir()+"/"+e.dir]; ok {
		require.NoError(t, a.err, "the entry does not apply to its base: write it again against the base as it is now")
	}
	if e.server != nil && fleet.ServerURL() != "" {
		e.fails = append(slices.DeleteFunc(slices.Clone(e.fails), func(id string) bool { return slices.Contains(e.server.passes, id) }),
			e.server.fails...)
		e.skips = append(slices.Clone(e.skips), e.server.skips...)
	}
	w, err := programs[target.Case.Number].worker(root, target.Case, target)
	require.NoError(t, err, "building case %d's worker", target.Case.Number)
	require.Empty(t, w.NoPoints, "every entry is graded with schedule points in its copy")
	opts := grade.Options{Root: root, Repeat: *repeat}
	if !*every {
		foldsRaces := slices.ContainsFunc(target.Case.Checks, func(in check.Info) bool {
			return in.Race && slices.Contains(e.fails, in.ID)
		})
		wrong := strings.HasPrefix(e.dir, "wrong/")
		named := func(id string) bool { return slices.Contains(e.fails, id) || slices.Contains(e.skips, id) }
		opts.Only = func(in check.Info) bool {
			if _, maybe := e.maybe[in.ID]; maybe && !foldsRaces {
				return false
			}
			switch {
			case !wrong:
				return true
			case foldsRaces: // every check but the explorer, for the races they see
				return !in.Scenes || named(in.ID)
			default:
				return named(in.ID)
			}
		}
	}
	rep, err := w.Grade(context.Background(), opts)
	require.NoError(t, err)
	require.Empty(t, rep.NoRace, "the library is proved with the race detector")
	others := e.server != nil && e.server.others != "" && fleet.ServerURL() != ""
	for _, res := range rep.Results {
		if others && !slices.Contains(e.fails, res.ID) && !slices.Contains(e.skips, res.ID) {
			t.Logf("on a real server %s: %s", res.ID, res.Status)
			continue
		}
		if _, ok := e.maybe[res.ID]; ok {
			t.Logf("maybe %s: %s", res.ID, res.Status) // what it was this time, for the table's reader
			continue
		}
		want := check.Pass
		switch {
		case slices.Contains(e.fails, res.ID):
			want = check.Fail
		case slices.Contains(e.skips, res.ID):
			want = check.Skip
		case e.hangs && res.NotRun:
			t.Logf("not run %s: %s", res.ID, res.Message) // after a hang, as the row allows
			continue
		}
		assert.Equal(t, want, res.Status, "check %q (%s): %s %s", res.ID, res.Figure, res.Name, res.Message)
		if part, ok := e.says[res.ID]; ok && want == check.Fail {
			assert.Contains(t, res.Message, part, "check %q failed for another reason", res.ID)
		}
	}
}

// maybes is how many times TestMaybes runs each check an entry's row
// marks maybe; 0 (the default) skips it. With measure, it runs that
// check instead, on every entry.
var (
	maybes  = flag.Int("maybes", 0, "run each maybe check of each entry this many times, and log how many runs failed")
	measure = flag.String("measure", "", "with -maybes: the check to run on every entry instead")
)

// TestMaybes measures the verdicts the tables call maybe: each such check
// of each entry (of the cases -run names) runs -maybes times, alone, and
// a line says how many runs failed. A check that fails every run of many
// is a verdict to write down as failed; one that never fails, a PASS the
// row may say. With -measure ID it measures check ID on every entry, as
// when a new check comes and each row must say what it does there. It
// decides nothing itself.
func TestMaybes(t *testing.T) {
	if *maybes == 0 {
		t.Skip("run with -maybes N")
	}
	r := root(t)
	for _, c := range checker.Cases() {
		for _, e := range entries[c.Number] {
			ids := slices.Sorted(maps.Keys(e.maybe))
			if *measure != "" {
				ids = nil
				if slices.ContainsFunc(c.Checks, func(in check.Info) bool { return in.ID == *measure }) {
					ids = []string{*measure}
				}
			}
			if len(ids) == 0 {
				continue
			}
			t.Run(fmt.Sprintf("case%02d/%s", c.Number, e.dir), func(t *testing.T) {
				t.Parallel()
				w, err := programs[c.Number].worker(r, c, entryTarget(c, e))
				require.NoError(t, err)
				for _, id := range ids {
					race := slices.ContainsFunc(c.Checks, func(in check.Info) bool { return in.ID == id && in.Race })
					failed := 0
					for range *maybes {
						run := w.Check(context.Background(), id, grade.Options{Root: r})
						// The race check's verdict is the races its runs
						// saw; alone, it sees only its own.
						if !run.Verdict.Pass || race && (len(run.Races) > 0 || run.HiddenRace) {
							failed++
						}
					}
					t.Logf("MAYBE case%02d/%s %s: failed %d of %d", c.Number, e.dir, id, failed, *maybes)
				}
			})
		}
	}
}

// TestEveryCheckCanFail holds the library to its purpose: every check of
// every case is failed by at least one known-wrong entry. A check that
// nothing fails has not been shown to catch anything.
func TestEveryCheckCanFail(t *testing.T) {
	for _, c := range checker.Cases() {
		for _, in := range c.Checks {
			caught := false
			for _, e := range entries[c.Number] {
				caught = caught || slices.Contains(e.fails, in.ID)
			}
			assert.True(t, caught, "case %d: no known-wrong entry fails %q (%s)", c.Number, in.ID, in.Name)
			assert.NotEmpty(t, in.Catches, "case %d: check %q does not name the wrong answer it catches", c.Number, in.ID)
		}
		assert.NotEmpty(t, entries[c.Number], "case %d has no library", c.Number)
	}
}

// TestEntriesNameRealChecks catches a typo in the table, which would
// otherwise quietly expect nothing.
func TestEntriesNameRealChecks(t *testing.T) {
	for _, c := range checker.Cases() {
		for _, e := range entries[c.Number] {
			for _, id := range e.fails {
				_, ok := c.Check(id)
				assert.True(t, ok, "case %d, %s: no check %q", c.Number, e.dir, id)
			}
			for id := range e.maybe {
				_, ok := c.Check(id)
				assert.True(t, ok, "case %d, %s: no check %q", c.Number, e.dir, id)
			}
			for _, id := range e.skips {
				_, ok := c.Check(id)
				assert.True(t, ok, "case %d, %s: no check %q", c.Number, e.dir, id)
				assert.False(t, slices.Contains(e.fails, id), "case %d, %s: %q is both failed and skipped", c.Number, e.dir, id)
				_, maybe := e.maybe[id]
				assert.False(t, maybe, "case %d, %s: %q is both a maybe and skipped", c.Number, e.dir, id)
			}
			_, isPatch := patched[c.Dir()+"/"+e.dir]
			if !isPatch {
				assert.DirExists(t, filepath.Join(c.Dir(), e.dir))
			}
		}
	}
}

// TestEntriesApply applies every entry written as its change to a base,
// and holds each to a row of the table: an entry that no longer applies
// fails here, named, and so does one that no row grades.
func TestEntriesApply(t *testing.T) {
	require.NotEmpty(t, patched)
	listed := map[string]bool{}
	for _, c := range checker.Cases() {
		for _, e := range entries[c.Number] {
			listed[c.Dir()+"/"+e.dir] = true
		}
	}
	for name, a := range patched {
		assert.NoError(t, a.err, "%s", name)
		assert.True(t, listed[name], "%s.patch is in no row of its case's table", name)
		if a.err == nil {
			e, err := patch.Read(name + ".patch")
			require.NoError(t, err)
			assert.NotEmpty(t, e.Mistake, "%s.patch does not say the mistake", name)
			assert.NotContains(t, e.Mistake, "Verdict", "%s.patch: the table holds the verdicts; the entry says the mistake", name)
		}
	}
}

// TestShippedInStep keeps each shipped/ entry identical to cases/ as the
// lab ships them, so that the verdict proved on shipped/ is the verdict a
// student sees. On a student's clone cases/ holds their work, so a
// difference is only an error in CI.
func TestShippedInStep(t *testing.T) {
	r := root(t)
	for _, c := range checker.Cases() {
		t.Run(c.Dir(), func(t *testing.T) {
			same, err := checker.Pristine(r, c)
			require.NoError(t, err)
			if !same {
				if os.Getenv("CI") != "" {
					t.Errorf("cases/%s differs from %s: change both together", c.Dir(), checker.Shipped(c))
				} else {
					t.Skipf("cases/%s differs from what the lab ships (your work, or a change to carry to %s)", c.Dir(), checker.Shipped(c))
				}
			}
		})
	}
}
