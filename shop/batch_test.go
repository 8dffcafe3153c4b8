package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"stampede/checker/check"
	"stampede/checker/grade"
)

// TestScheduleTimesEachCaseFirstThenTheLongest plays a batch on a clock of
// its own: each case is graded once first, the estimate comes when the
// last case is timed, and the longest grades go first after that.
func TestScheduleTimesEachCaseFirstThenTheLongest(t *testing.T) {
	subs := make([]submission, 3)
	cases := []check.Case{{Number: 1}, {Number: 2}}
	t0 := time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)
	s := newSchedule(subs, cases, 1, t0)

	j, ok := s.next(t0)
	require.True(t, ok)
	assert.Equal(t, job{0, 0}, j)
	d := s.finish(j, t0.Add(10*time.Second))
	assert.Equal(t, time.Duration(-1), d.left, "case 2 has not been timed")
	assert.Equal(t, time.Duration(-1), d.estimate)

	j, _ = s.next(t0.Add(10 * time.Second))
	assert.Equal(t, job{0, 1}, j, "the case not timed yet")
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
	s := newSchedule(subs, cases, 2, t0)
	a, _ := s.next(t0)
	b, _ := s.next(t0)
	assert.Equal(t, []job{{0, 0}, {0, 1}}, []job{a, b}, "each case timed at once")
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
