package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"stampede/checker/check"
	"stampede/checker/grade"
)

// batch grades every case of every submission, a few grades at a time,
// and learns what each case costs as it goes, to say how long is left.
// Each grade is one case of one submission in a build of its own, as
// grade.Grade makes it, so no submission can see or change another's.
type batch struct {
	subs  []submission
	cases []check.Case
	opts  grade.Options // Root and Repeat; Workers is set from jobs
	jobs  int           // grades at once
	p     *progress

	// grade grades one target (grade.Grade); now reads the clock
	// (time.Now). The tests set both.
	grade func(context.Context, grade.Target, grade.Options) (grade.Report, error)
	now   func() time.Time
}

// job is one grade of a batch: case c (an index into the cases) of the
// submissions subs (indexes too). A case is graded once for every
// submission whose files of it are the same (a case not started is the
// same in every clone), and the one verdict given to each.
type job struct {
	c    int
	subs []int
}

// A grade on its own runs two check children per processor (see
// grade.Options.Workers): a good part of a check is a query held shut on
// the real clock, when its child is idle. The grades of a batch together
// run up to twice that, shared out among them, and each no more than it
// would alone: on two processors, two grades at once run four children
// each, and four grades two each. So grades side by side fill one
// another's idle time, builds and last checks, while the children, their
// memory and the race detector's cost stay bounded by the processors.
const (
	childrenPerGrade = 2 // per processor, one grade alone
	childrenPerBatch = 4 // per processor, every grade of a batch together
)

// workersFor is the children each of jobs grades at once may run.
func workersFor(jobs int) int {
	cpus := runtime.NumCPU()
	share := (childrenPerBatch*cpus + jobs - 1) / max(1, jobs)
	return max(1, min(childrenPerGrade*cpus, share))
}

// gradeMemory is what one grade may hold at once: its build's link, some
// hundreds of megabytes with the race detector, and its share of the
// check children, a few hundred each with the race detector's shadow
// memory.
const gradeMemory = 2 << 30

// defaultJobs is how many grades run at once unless told: one per
// processor, since a grade's build (the link) keeps one busy, and no more
// than the memory the system has free allows.
func defaultJobs() int {
	avail, known := availableMemory()
	return jobsFor(runtime.NumCPU(), avail, known)
}

// jobsFor is defaultJobs on a machine of cpus processors with avail bytes
// of memory free (when known).
func jobsFor(cpus int, avail int64, known bool) int {
	jobs := cpus
	if known {
		jobs = min(jobs, int(avail/gradeMemory))
	}
	return max(1, jobs)
}

// run grades every job and returns the reports by submission, each in the
// order of b.cases, and the estimate of the whole batch's time that it
// gave (-1 when it gave none). The first error stops the batch.
func (b *batch) run(ctx context.Context) ([][]grade.Report, time.Duration, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	reps := make([][]grade.Report, len(b.subs))
	for i := range reps {
		reps[i] = make([]grade.Report, len(b.cases))
	}
	s := newSchedule(b.subs, b.cases, b.jobs, b.now(), func(sub, c int) string {
		return filesKey(b.subs[sub].target(b.cases[c]).Src)
	})
	opts := b.opts
	opts.Workers = workersFor(b.jobs)

	var (
		wg       sync.WaitGroup
		errOnce  sync.Once
		firstErr error
	)
	for range max(1, b.jobs) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				j, ok := s.next(b.now())
				if !ok || ctx.Err() != nil {
					return
				}
				sub, c := b.subs[j.subs[0]], b.cases[j.c]
				rep, err := b.grade(ctx, sub.target(c), opts)
				if err != nil {
					errOnce.Do(func() {
						firstErr = fmt.Errorf("grading %s, case %d: %w", sub.given, c.Number, err)
						cancel()
					})
					return
				}
				for _, i := range j.subs {
					rep.Target = b.subs[i].target(c)
					reps[i][j.c] = rep
				}
				b.report(s.finish(j, b.now()))
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return nil, -1, firstErr
	}
	if err := ctx.Err(); err != nil {
		return nil, -1, err
	}
	return reps, s.estimated, nil
}

// report says that a grade is done, and how long the rest will take.
func (b *batch) report(d done) {
	names := make([]string, len(d.job.subs))
	for k, i := range d.job.subs {
		names[k] = b.subs[i].given
	}
	label := fmt.Sprintf("%s: case %d (%s)", strings.Join(names, ", "), b.cases[d.job.c].Number, round(d.took))
	if len(names) > 1 {
		label = fmt.Sprintf("%s: case %d, the same files, graded once (%s)", strings.Join(names, ", "), b.cases[d.job.c].Number, round(d.took))
	}
	if d.left >= 0 {
		label += ", about " + round(d.left) + " left"
	}
	b.p.Step(d.count, d.total, label)
	if d.estimate >= 0 {
		b.p.Line("estimate: about %s in all, %s from now (each case timed once, %d grades at a time)",
			round(d.estimate), round(d.left), max(1, b.jobs))
	}
}

// round is a duration to the second, or to a tenth under ten seconds.
func round(d time.Duration) string {
	if d < 10*time.Second {
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

// schedule hands out a batch's jobs and times them. It first grades one
// submission of each case, so that every case is timed early; after that
// the longest grades go first, so that no long grade is left to end the
// batch alone.
type schedule struct {
	mu      sync.Mutex
	began   time.Time
	pending []*job
	running map[*job]time.Time
	cases   []check.Case
	cost    map[int]time.Duration // by index into cases: the mean grade
	graded  map[int]int           // by index into cases: grades timed
	width   int                   // grades at once
	total   int
	count   int
	// estimated is the whole batch's time as estimated once every case
	// was timed, or -1 before then.
	estimated time.Duration
}

// newSchedule plans a batch's jobs: each case of each submission, those
// whose key (filesKey) is one and the same graded once together.
func newSchedule(subs []submission, cases []check.Case, width int, now time.Time, key func(sub, c int) string) *schedule {
	s := &schedule{
		began:   now,
		width:   max(1, width),
		running: map[*job]time.Time{},
		cases:   cases,
		cost:    map[int]time.Duration{},
		graded:  map[int]int{},

		estimated: -1,
	}
	same := map[string]*job{}
	for i := range subs {
		for c := range cases {
			k := key(i, c)
			if j, ok := same[k]; ok && k != "" {
				j.subs = append(j.subs, i)
				continue
			}
			j := &job{c: c, subs: []int{i}}
			same[k] = j
			s.pending = append(s.pending, j)
		}
	}
	s.total = len(subs) * len(cases)
	return s
}

// next hands out the next job: a case not timed yet and not being timed,
// else the one whose grades have taken longest.
func (s *schedule) next(now time.Time) (*job, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.pending) == 0 {
		return nil, false
	}
	pick := -1
	for i, j := range s.pending {
		if s.graded[j.c] == 0 && !s.timing(j.c) {
			pick = i
			break
		}
	}
	if pick < 0 {
		pick = 0
		for i, j := range s.pending {
			if s.cost[j.c] > s.cost[s.pending[pick].c] {
				pick = i
			}
		}
	}
	j := s.pending[pick]
	s.pending = append(s.pending[:pick], s.pending[pick+1:]...)
	s.running[j] = now
	return j, true
}

// timing reports whether a grade of case c is running.
func (s *schedule) timing(c int) bool {
	for j := range s.running {
		if j.c == c {
			return true
		}
	}
	return false
}

// done is what the schedule knows when a job ends.
type done struct {
	job          *job
	took         time.Duration
	count, total int
	// left is the time the rest should take, or -1 while a case has not
	// been timed; estimate is the whole batch's, given once, when the last
	// case is first timed, and -1 otherwise.
	left, estimate time.Duration
}

// finish records that job j ended at now.
func (s *schedule) finish(j *job, now time.Time) done {
	s.mu.Lock()
	defer s.mu.Unlock()
	took := now.Sub(s.running[j])
	delete(s.running, j)
	n := s.graded[j.c]
	s.cost[j.c] = (s.cost[j.c]*time.Duration(n) + took) / time.Duration(n+1)
	s.graded[j.c] = n + 1
	s.count += len(j.subs)
	d := done{job: j, took: took, count: s.count, total: s.total, left: -1, estimate: -1}
	if len(s.graded) < len(s.cases) {
		return d
	}
	d.left = s.left(now)
	if s.estimated < 0 {
		s.estimated = now.Sub(s.began) + d.left
		d.estimate = s.estimated
	}
	return d
}

// left estimates the time the jobs not yet done will take: their grades'
// time, at each case's mean so far, shared among the grades that run at
// once; and never less than the longest of them.
func (s *schedule) left(now time.Time) time.Duration {
	var sum, longest time.Duration
	add := func(d time.Duration) {
		sum += d
		longest = max(longest, d)
	}
	for _, j := range s.pending {
		add(s.cost[j.c])
	}
	for j, began := range s.running {
		add(max(s.cost[j.c]-now.Sub(began), 0))
	}
	return max(sum/time.Duration(s.width), longest)
}

var errNotPlain = errors.New("not a plain file")

// filesKey names the contents of the folder dir, every file in it and
// below, by name and bytes: two folders with one key build into one and
// the same program. It is "" when dir cannot be read all through, so that
// such a folder is graded on its own (and its grade says what is wrong).
func filesKey(dir string) string {
	if dir == "" {
		return ""
	}
	h := sha256.New()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%q %v\n", filepath.ToSlash(rel), d.Type())
		switch {
		case d.IsDir():
			return nil
		case !d.Type().IsRegular():
			return errNotPlain // a link may point anywhere: no key
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%d\n", len(data))
		h.Write(data)
		return nil
	})
	if err != nil {
		return ""
	}
	return hex.EncodeToString(h.Sum(nil))
}
