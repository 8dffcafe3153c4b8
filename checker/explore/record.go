package explore

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"stampede/checker/harness"
)

// A Record is what one play of a Redis case's scene has found so far: its
// timeline, each line stamped with the scene's time, the first rule the
// play broke, and whether the process failed to come to rest. A case's
// Play keeps one, and its hooks, which run on the shops' goroutines, log
// through it: it is safe for concurrent use. Its lock is its own, so a
// case may log while it holds a lock of its own, as long as nothing the
// record calls (now, stamp) takes that lock.
type Record struct {
	now    func() time.Duration
	stamp  func(time.Duration) string
	margin string // as wide as a stamp and the gap after it
	story  bool

	mu    sync.Mutex
	lines []string
	bad   string
	stuck *harness.Stuck
}

// NewRecord returns an empty record whose lines are stamped with now(),
// written by stamp. Without story it keeps no timeline, only the broken
// rule: a check's plays need no story, and formatting every line of
// hundreds of scenes costs.
func NewRecord(now func() time.Duration, stamp func(time.Duration) string, story bool) *Record {
	return &Record{now: now, stamp: stamp, margin: strings.Repeat(" ", len(stamp(0))+2), story: story}
}

// Width returns a stamp that writes a time right-aligned in n columns
// ("  1.25s"), for NewRecord.
func Width(n int) func(time.Duration) string {
	return func(d time.Duration) string { return fmt.Sprintf("%*v", n, d) }
}

// Logf adds a line to the timeline, stamped with the scene's time now.
func (r *Record) Logf(format string, args ...any) {
	if r.story {
		r.LogAt(r.now(), format, args...)
	}
}

// LogAt adds a line stamped with t, for an event the record hears of
// after it happened.
func (r *Record) LogAt(t time.Duration, format string, args ...any) {
	if !r.story {
		return
	}
	line := r.stamp(t) + "  " + fmt.Sprintf(format, args...)
	r.mu.Lock()
	r.lines = append(r.lines, line)
	r.mu.Unlock()
}

// Fail records a broken rule. The first one is the play's verdict; later
// ones are dropped, since they often follow from it.
func (r *Record) Fail(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.bad == "" {
		r.bad = fmt.Sprintf(format, args...)
		r.lines = append(r.lines, r.margin+"BROKEN: "+r.bad)
	}
}

// Broken reports whether a rule has been broken.
func (r *Record) Broken() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.bad != ""
}

// Unrested reports whether err says the process never came to rest (a
// *harness.Stuck), and keeps the first such for the explorer's loop to
// judge (see Explorer): whether the code or the machine kept it from rest
// is the loop's to decide, not the play's.
func (r *Record) Unrested(err error) bool {
	var st *harness.Stuck
	if !errors.As(err, &st) {
		return false
	}
	r.mu.Lock()
	if r.stuck == nil {
		r.stuck = st
	}
	r.mu.Unlock()
	return true
}

// Played returns what the play found so far.
func (r *Record) Played() Played {
	r.mu.Lock()
	defer r.mu.Unlock()
	return Played{Bad: r.bad, Lines: slices.Clone(r.lines), Stuck: r.stuck}
}
