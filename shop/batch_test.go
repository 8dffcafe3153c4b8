package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"stampede/checker/check"
	"stampede/checker/grade"
)

// apart keys every case of every submission apart: nothing is shared.
func apart(sub, c int) string { return fmt.Sprint(sub, c) }

// TestScheduleTimesEachCaseFirstThenTheLongest plays a batch on a clock of
// its own: each case is graded once first, the estimate comes when the
// last case is timed, and the longest grades go first after that.
func TestScheduleTimesEachCaseFirstThenTheLongest(t *testing.T) {
	subs := make([]submission, 3)
	cases := []check.Case{{Number: 1}, {Number: 2}}
	t0 := time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)
	s := newSchedule(subs, cases, 1, t0, apart)

	j, ok := s.next(t0)
	require.True(t, ok)
	assert.Equal(t, job{0, []int{0}}, *j)
	d := s.finish(j, t0.Add(10*time.Second))
	assert.Equal(t, time.Duration(-1), d.left, "case 2 has not been timed")
	assert.Equal(t, time.Duration(-1), d.estimate)

	j, _ = s.next(t0.Add(10 * time.Second))
	assert.Equal(t, job{1, []int{0}}, *j, "the case not timed yet")
	d = s.finish(j, t0.Add(12*time.Second))
	// Left: two more of case 1 (10 s) and two of case 2 (2 s), one at a time.
	assert.Equal(t, 24*time.Second, d.left)
	assert.Equal(t, 36*time.Second, d.estimate)
	assert.Equal(t, 2, d.count)
	assert.Equal(t, 6, d.total)

	j, _ = s.next(t0.Add(12 * time.Second))
	assert.Equal(t, 0, j.c, "the longest case next")
	d = s.finish(j, t0.Add(20*time.Second))
	assert.Equal(t, time.Duration(-1), d.estimate, "the estimate is given once")
	// Case 1 now averages 9 s: one more of it, and two of case 2.
	assert.Equal(t, 13*time.Second, d.left)
	assert.Equal(t, 36*time.Second, s.estimated)
}

// TestScheduleSharesTheTimeLeftAmongTheGradesAtOnce: with grades running
// side by side, the time left is theirs shared, never less than the
// longest single grade still to run.
func TestScheduleSharesTheTimeLeftAmongTheGradesAtOnce(t *testing.T) {
	subs := make([]submission, 2)
	cases := []check.Case{{Number: 1}, {Number: 2}}
	t0 := time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)
	s := newSchedule(subs, cases, 2, t0, apart)
	a, _ := s.next(t0)
	b, _ := s.next(t0)
	assert.Equal(t, []job{{0, []int{0}}, {1, []int{0}}}, []job{*a, *b}, "each case timed at once")
	s.finish(a, t0.Add(4*time.Second))
	d := s.finish(b, t0.Add(30*time.Second))
	// Left: one of each, 4 s and 30 s, two at a time: the 30 s one decides.
	assert.Equal(t, 30*time.Second, d.left)
	assert.Equal(t, 60*time.Second, d.estimate)
}

// TestBatchGradesEachJobOnceInItsPlace runs a batch on a fake grader, a
// few grades at once: every case of every submission is graded once, the
// reports come back in place, and the progress says how much is left.
func TestBatchGradesEachJobOnceInItsPlace(t *testing.T) {
	subs := []submission{{given: "ada"}, {given: "bob"}, {given: "cy"}}
	cases := []check.Case{{Number: 1}, {Number: 4}, {Number: 7}}
	var mu sync.Mutex
	graded := map[string]int{}
	var out bytes.Buffer
	b := batch{
		subs: subs, cases: cases, jobs: 2, p: newProgress(&out),
		opts: grade.Options{Repeat: 1},
		now:  time.Now,
		grade: func(_ context.Context, target grade.Target, opts grade.Options) (grade.Report, error) {
			mu.Lock()
			defer mu.Unlock()
			graded[target.Src]++
			assert.Equal(t, workersFor(2), opts.Workers)
			return grade.Report{Target: target}, nil
		},
	}
	for i := range b.subs {
		b.subs[i].cases = "/subs/" + b.subs[i].given + "/cases"
	}
	reps, estimate, err := b.run(context.Background())
	require.NoError(t, err)
	assert.GreaterOrEqual(t, estimate, time.Duration(0))
	require.Len(t, reps, 3)
	for i, s := range b.subs {
		require.Len(t, reps[i], 3)
		for k, c := range cases {
			assert.Equal(t, s.target(c), reps[i][k].Target)
			assert.Equal(t, 1, graded[s.target(c).Src])
		}
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	assert.Len(t, lines, 10, "a line per grade and one estimate:\n%s", out.String())
	assert.Equal(t, 1, strings.Count(out.String(), "estimate: about "), out.String())
	assert.Contains(t, out.String(), "[9/9] ")
	assert.Contains(t, out.String(), " left\n")
}

// TestBatchStopsAtTheFirstError: a grade that cannot run (the toolchain
// broke) stops the others, and the error names the submission and case.
func TestBatchStopsAtTheFirstError(t *testing.T) {
	subs := []submission{{given: "ada", cases: "/a"}, {given: "bob", cases: "/b"}}
	b := batch{
		subs: subs, cases: []check.Case{{Number: 1}, {Number: 2}}, jobs: 2, p: newProgress(&bytes.Buffer{}),
		now: time.Now,
		grade: func(ctx context.Context, target grade.Target, _ grade.Options) (grade.Report, error) {
			if target.Case.Number == 2 {
				return grade.Report{}, errors.New("no toolchain")
			}
			<-ctx.Done()
			return grade.Report{}, ctx.Err()
		},
	}
	_, _, err := b.run(context.Background())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "case 2: no toolchain")
}

// TestJobsFollowTheProcessorsAndTheMemory: a grade per processor, as many
// as the free memory holds, and always one.
func TestJobsFollowTheProcessorsAndTheMemory(t *testing.T) {
	assert.Equal(t, 2, jobsFor(2, 20<<30, true))
	assert.Equal(t, 3, jobsFor(8, 7<<30, true), "7 GiB free holds three grades")
	assert.Equal(t, 1, jobsFor(8, 1<<30, true))
	assert.Equal(t, 8, jobsFor(8, 0, false), "memory unknown: the processors decide")
	assert.Equal(t, 1, jobsFor(1, 64<<30, true))
	assert.GreaterOrEqual(t, workersFor(64), 1)
}

// TestTheSameFilesAreGradedOnce: two submissions whose case is the same,
// byte for byte (a case not started is), share one grade, and each gets
// its verdict; files that differ in a byte, or a link, are graded apart.
func TestTheSameFilesAreGradedOnce(t *testing.T) {
	root := t.TempDir()
	write := func(sub, name, body string) {
		dir := filepath.Join(root, sub, "cases", "case01")
		require.NoError(t, os.MkdirAll(dir, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644))
	}
	write("ada", "shop.go", "package case01\n")
	write("bob", "shop.go", "package case01\n")
	write("cy", "shop.go", "package case01\n// mine\n")
	write("dee", "shop.go", "package case01\n")
	require.NoError(t, os.Symlink(filepath.Join(root, "cy", "cases", "case01", "shop.go"), filepath.Join(root, "dee", "cases", "case01", "more.go")))
	var subs []submission
	for _, n := range []string{"ada", "bob", "cy", "dee"} {
		subs = append(subs, submission{given: n, cases: filepath.Join(root, n, "cases")})
	}
	assert.Equal(t, filesKey(subs[0].cases), filesKey(subs[1].cases))
	assert.NotEqual(t, filesKey(subs[0].cases), filesKey(subs[2].cases))
	assert.Empty(t, filesKey(subs[3].cases), "a link has no key")

	var mu sync.Mutex
	var graded []string
	var out bytes.Buffer
	b := batch{
		subs: subs, cases: []check.Case{{Number: 1}}, jobs: 2, p: newProgress(&out), now: time.Now,
		grade: func(_ context.Context, target grade.Target, _ grade.Options) (grade.Report, error) {
			mu.Lock()
			defer mu.Unlock()
			graded = append(graded, target.Src)
			return grade.Report{Target: target, Results: []check.Result{{ID: "once", Status: check.Pass}}}, nil
		},
	}
	reps, _, err := b.run(context.Background())
	require.NoError(t, err)
	assert.Len(t, graded, 3, "ada and bob share one grade")
	for i, s := range subs {
		assert.Equal(t, s.target(check.Case{Number: 1}), reps[i][0].Target, "each report names its own submission")
		assert.Equal(t, check.Pass, reps[i][0].Results[0].Status)
	}
	assert.Contains(t, out.String(), "ada, bob: case 1, the same files, graded once")
	assert.Contains(t, out.String(), "[4/4] ")
}
