package grade

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"stampede/checker/check"
	"stampede/checker/stack"
)

// Options set how a target is graded.
type Options struct {
	Root    string // the module root, the folder that holds go.mod
	NoRace  bool   // build without the race detector
	Repeat  int    // runs of each check (1 when zero; see check.Info.RunsOf); a check passes only if every run passes
	Limits  Limits
	Workers int // children at once (twice the number of CPUs when zero)
	// Seed is handed to every check: a check that draws random scenes
	// plays the ones this seed gives, so that a failure can be replayed.
	// Zero lets each check choose (and report) its own.
	Seed uint64
	// Only, when set, runs only the checks it accepts; the report holds
	// only theirs. (The race check still fails on a race seen in any of
	// the runs made.)
	Only func(check.Info) bool
	// Decided, when set, is handed each check's result as soon as it is
	// known and every check listed before it has been handed its own: in
	// the case's order, one at a time, so that a report can be printed
	// line by line while the later checks still run. The race check is
	// the exception, as it is decided by every run of every check: it
	// waits for nobody and nobody waits for it. It is handed on the
	// moment any run finds a race, with the races found so far (a FAIL
	// that no later run can undo; its figure says "so far" while runs are
	// out, and the report lists every race), or at the end when none did.
	// Otherwise the report holds the same results. It is not called for a
	// target that does not compile.
	Decided func(check.Result)

	// part and parts are the part of a check a run plays (check.Info.Parts),
	// set by Grade for each run of a parted check.
	part, parts int

	// trustImports skips the check of what the code imports. Only this
	// package's tests set it, to prove what happens when code gets past it.
	trustImports bool
}

// Report is the verdict on one target.
type Report struct {
	Target  Target
	Results []check.Result // in the case's order
	Build   *BuildError    // set when the target does not compile
	NoRace  string         // why the race detector was not used, if it was not
}

// Passed reports whether every check passed (a skipped check does not
// count against it).
func (r Report) Passed() bool {
	for _, res := range r.Results {
		if res.Status != check.Pass && res.Status != check.Skip {
			return false
		}
	}
	return true
}

// Counts returns how many checks passed and how many failed; skipped
// checks are in neither.
func (r Report) Counts() (passed, failed int) {
	for _, res := range r.Results {
		switch res.Status {
		case check.Pass:
			passed++
		case check.Fail, check.Flaky:
			failed++
		}
	}
	return passed, failed
}

// Grade builds the worker for target and runs each of its checks in a
// child process of its own, opts.Repeat times.
func Grade(ctx context.Context, target Target, opts Options) (Report, error) {
	rep := Report{Target: target}
	w, err := buildWorker(ctx, opts.Root, target, !opts.NoRace, opts.trustImports)
	var be *BuildError
	if errors.As(err, &be) {
		rep.Build = be
		msg := "not run: " + target.Dir() + " " + be.Problem()
		for _, in := range target.Case.Checks {
			rep.Results = append(rep.Results, check.Result{ID: in.ID, Name: in.Name, Status: check.Fail, Message: msg})
		}
		return rep, nil
	}
	if err != nil {
		return rep, err
	}
	defer w.Close()
	return w.Grade(ctx, opts)
}

// Grade runs each check of the worker's target in a child process of its
// own, opts.Repeat times, as Grade does once it has built the worker.
// opts.NoRace only says so in the report: whether the race detector is
// linked in was decided when the worker was built.
func (w *Worker) Grade(ctx context.Context, opts Options) (Report, error) {
	rep := Report{Target: w.Target, NoRace: w.NoRace}
	if opts.NoRace {
		rep.NoRace = "the race detector was turned off"
	}
	rep.Results = w.runAll(ctx, opts)
	return rep, ctx.Err()
}

// runAll runs every check opts.Repeat times, a few children at once.
func (w *Worker) runAll(ctx context.Context, opts Options) []check.Result {
	checks := w.Target.Case.Checks
	if opts.Only != nil {
		checks = slices.DeleteFunc(slices.Clone(checks), func(in check.Info) bool { return !opts.Only(in) })
	}
	repeat := max(opts.Repeat, 1)
	workers := opts.Workers
	if workers <= 0 {
		// Twice the processors: a good part of a check is a query held
		// shut on the real clock (the story's 0.2 s), when its child is
		// idle. On two cores this took check 1 from 5.7 s to 3.4 s and
		// check 5 from 11.7 s to 6.1 s (medians of 3), and left the
		// checks that keep the processors busy (4, 7) where they were.
		workers = 2 * runtime.NumCPU()
	}
	runs := make([][]Run, len(checks))
	for i, in := range checks {
		runs[i] = make([]Run, in.RunsOf(repeat)*in.PartsOf())
	}
	type job struct{ i, k int }
	jobs := make(chan job)
	var wg sync.WaitGroup
	// Once a run finds code that never stops, every other check would
	// spend the hang bound finding it again: the checks not yet started
	// are reported as not run instead.
	var hung atomic.Bool
	out := inOrder{checks: checks, runs: runs, left: make([]int, len(checks)), decided: opts.Decided,
		handed: make([]bool, len(checks))}
	if !opts.NoRace && w.NoRace == "" {
		out.raceFail = func(in check.Info, log raceLog, out int) check.Result {
			res := w.raceResult(in, check.Result{}, log.races, log.hidden, false)
			if out > 0 {
				res.Figure += " so far"
			}
			return res
		}
	}
	for i := range checks {
		out.left[i] = len(runs[i])
	}
	order := runOrder(checks)
	// The report's first line waits for the first check's runs: until
	// they are in, only one child per processor runs, so that they have
	// a processor each rather than a share of one. Two children per
	// processor are for checks idle on the real clock; the first check
	// sharing a processor with three others took case 7's first line
	// from about half a second to one.
	first := make(chan struct{})
	var firstLeft atomic.Int64
	if len(order) > 0 {
		firstLeft.Store(int64(len(runs[order[0]])))
	} else {
		close(first)
	}
	early := min(workers, runtime.NumCPU())
	for n := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if n >= early {
				select {
				case <-first:
				case <-ctx.Done():
				}
			}
			for j := range jobs {
				var r Run
				if hung.Load() {
					r = Run{NotRun: "not run: another check found code that never stops running (see above)"}
				} else {
					o := opts
					if n := checks[j.i].PartsOf(); n > 1 {
						o.part, o.parts = j.k%n, n
					}
					r = w.run(ctx, checks[j.i], o)
				}
				if r.Verdict.Hung {
					hung.Store(true)
				}
				out.done(j.i, j.k, r)
				if j.i == order[0] && firstLeft.Add(-1) == 0 {
					close(first)
				}
			}
		}()
	}
	for _, i := range order {
		for k := range runs[i] {
			jobs <- job{i, k}
		}
	}
	close(jobs)
	wg.Wait()

	var all raceLog
	for _, rs := range runs {
		for _, r := range rs {
			all.add(r)
		}
	}
	results := make([]check.Result, len(checks))
	for i, in := range checks {
		results[i] = fold(in, runs[i])
		if in.Race {
			results[i] = w.raceResult(in, results[i], all.races, all.hidden, opts.NoRace)
		}
	}
	out.finish(results)
	return results
}

// raceLog gathers the races the runs found, each race once.
type raceLog struct {
	races  []stack.Race
	seen   map[string]bool
	hidden bool // a run ended with the race detector's status but no report
}

func (l *raceLog) add(r Run) {
	l.hidden = l.hidden || r.HiddenRace
	for _, race := range r.Races {
		if l.seen == nil {
			l.seen = map[string]bool{}
		}
		if k := race.Key(); !l.seen[k] {
			l.seen[k] = true
			l.races = append(l.races, race)
		}
	}
}

// found reports whether any run so far found a race.
func (l *raceLog) found() bool { return len(l.races) > 0 || l.hidden }

// runOrder returns the order in which the checks' runs are started: the
// first check's, so that the report's first line is known within a run
// of it; then the explorers', the longest runs of a grade, which started
// last would end it alone; then the rest, in the case's order, so that
// the lines that follow are known one after another.
func runOrder(checks []check.Info) []int {
	order := make([]int, 0, len(checks))
	if len(checks) > 0 && !checks[0].Scenes {
		order = append(order, 0)
	}
	for _, scenes := range []bool{true, false} {
		for i, in := range checks {
			if in.Scenes == scenes && (i > 0 || in.Scenes) {
				order = append(order, i)
			}
		}
	}
	return order
}

// inOrder hands the checks' results to Options.Decided in the case's
// order, each as soon as its runs are in and its predecessors' results
// were handed on; the race check as soon as a run finds a race, or at the
// end.
type inOrder struct {
	mu      sync.Mutex
	checks  []check.Info
	runs    [][]Run
	left    []int  // runs of each check still out
	handed  []bool // results handed on
	next    int    // the first check, race check aside, not handed on yet
	races   raceLog
	decided func(check.Result)
	// raceFail decides the race check once a run has found a race, given
	// the races found and the runs still out; nil when the grade has no
	// race detector (the check is then a SKIP, handed on at the end).
	raceFail func(in check.Info, races raceLog, out int) check.Result
}

// done records run k of check i.
func (o *inOrder) done(i, k int, r Run) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.runs[i][k] = r
	o.left[i]--
	o.races.add(r)
	if o.decided == nil {
		return
	}
	if o.raceFail != nil && o.races.found() {
		out := 0
		for _, n := range o.left {
			out += n
		}
		for j, in := range o.checks {
			if in.Race && !o.handed[j] {
				o.hand(j, o.raceFail(in, o.races, out))
			}
		}
	}
	for ; o.next < len(o.checks); o.next++ {
		if o.checks[o.next].Race || o.handed[o.next] {
			continue
		}
		if o.left[o.next] > 0 {
			break
		}
		o.hand(o.next, fold(o.checks[o.next], o.runs[o.next]))
	}
}

func (o *inOrder) hand(i int, r check.Result) {
	o.handed[i] = true
	o.decided(r)
}

// finish hands on the results not handed on yet, once every run is in.
func (o *inOrder) finish(results []check.Result) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.decided == nil {
		return
	}
	for i, r := range results {
		if !o.handed[i] {
			o.hand(i, r)
		}
	}
}

// fold turns the runs of one check into its result: PASS when every run
// passed, FAIL when none did, FLAKY in between. The figure and message are
// those of the first failing run, or of the last run when all passed.
//
// Runs never started (after another check hung) are no evidence of a
// schedule-dependent bug, so they never make a check FLAKY. They do leave
// the check unproven: like a case that does not compile, the check is a
// FAIL that says it was not run. (A SKIP would read more gently, but which
// checks get started before the hang is found depends on how many run side
// by side, so the verdicts would differ from one machine to the next.)
//
// A run whose scene did not happen (a skipped verdict) is no evidence
// either way: the check is judged by the runs that tested something, and
// is a SKIP, with the reason, when none did.
func fold(in check.Info, all []Run) check.Result {
	all = joinParts(in, all)
	runs := make([]Run, 0, len(all))
	notRun := ""
	var skipped *Run
	for i, r := range all {
		switch {
		case r.NotRun != "":
			notRun = r.NotRun
			continue
		case r.Verdict.Skipped:
			skipped = &all[i]
			continue
		}
		runs = append(runs, r)
	}
	if len(runs) == 0 && notRun == "" && skipped != nil {
		return check.Result{ID: in.ID, Name: in.Name, Status: check.Skip, Runs: len(all), Message: skipped.Verdict.Message}
	}
	if len(runs) == 0 {
		return check.Result{ID: in.ID, Name: in.Name, Status: check.Fail, Message: notRun, NotRun: true}
	}
	res := check.Result{ID: in.ID, Name: in.Name, Runs: len(runs)}
	var failed *Run
	for i := range runs {
		if runs[i].Verdict.Pass {
			res.Passed++
		} else if failed == nil {
			failed = &runs[i]
		}
	}
	v := runs[len(runs)-1].Verdict
	if failed != nil {
		v = failed.Verdict
		if failed.Crashed {
			res.Detail = failed.Stderr // the whole crash, for --verbose
		}
	}
	res.Figure, res.Message = v.Figure, v.Message
	switch {
	case res.Passed == len(runs) && notRun != "":
		res.Status = check.Fail
		res.NotRun = true
		res.Message = fmt.Sprintf("passed %d of %d runs, then %s", res.Passed, len(all), notRun)
	case res.Passed == len(runs):
		res.Status = check.Pass
	case res.Passed == 0:
		res.Status = check.Fail
	default:
		res.Status = check.Flaky
		res.Message = fmt.Sprintf("passed %d of %d runs; a concurrency bug that shows only sometimes is still a bug: %s",
			res.Passed, len(runs), res.Message)
	}
	return res
}

// raceResult decides the race check: it fails when any run of any check
// saw a race (by its report, or by the race detector's exit status when the
// report never arrived), and is skipped when there was no race detector.
func (w *Worker) raceResult(in check.Info, own check.Result, races []stack.Race, hidden, off bool) check.Result {
	if w.NoRace != "" || off {
		why := w.NoRace
		if off {
			why = "the race detector was turned off"
		}
		return check.Result{ID: in.ID, Name: in.Name, Status: check.Skip, Message: why}
	}
	if len(races) == 0 && hidden {
		return check.Result{
			ID: in.ID, Name: in.Name, Status: check.Fail, Runs: own.Runs, Figure: "1 race",
			Message: fmt.Sprintf("the race detector found a data race (the program exited with its status, %d), "+
				"but its report did not reach the grader: run the story, go run ./shop run %d, to see it", raceExit, w.Target.Case.Number),
		}
	}
	if len(races) == 0 {
		return own
	}
	lines := make([]string, len(races))
	reports := make([]string, len(races))
	for i, r := range races {
		lines[i] = "race: " + r.String(check.Module)
		reports[i] = r.Report
	}
	return check.Result{
		ID: in.ID, Name: in.Name, Status: check.Fail, Runs: own.Runs,
		Figure:  fmt.Sprintf("%d race(s)", len(races)),
		Message: strings.Join(lines, "\n"),
		Detail:  strings.Join(reports, "\n"),
	}
}

// joinParts turns the runs of a parted check (check.Info.Parts), its parts
// side by side, into one run per repetition: the first part not started or
// that failed, or one whose scene did not happen; else a pass whose figure
// joins the parts' figures.
func joinParts(in check.Info, all []Run) []Run {
	n := in.PartsOf()
	if n == 1 {
		return all
	}
	var joined []Run
	for start := 0; start+n <= len(all); start += n {
		parts := all[start : start+n]
		pick := -1
		for i, r := range parts {
			if r.NotRun != "" || !r.Verdict.Pass && !r.Verdict.Skipped {
				pick = i
				break
			}
			if r.Verdict.Skipped && pick < 0 {
				pick = i
			}
		}
		if pick >= 0 {
			joined = append(joined, parts[pick])
			continue
		}
		r := parts[0]
		figures := make([]string, 0, n)
		for _, p := range parts {
			if p.Verdict.Figure != "" {
				figures = append(figures, p.Verdict.Figure)
			}
		}
		r.Verdict.Figure = strings.Join(figures, "; ")
		joined = append(joined, r)
	}
	return joined
}
