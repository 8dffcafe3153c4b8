package case10

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"stampede/checker/check"
	"stampede/checker/fleet"
	"stampede/checker/harness"
	revalshareload "stampede/checker/library/case10/right/evalsha-reload"
	rfencing "stampede/checker/library/case10/right/fencing"
	rtwodelsleasefirst "stampede/checker/library/case10/right/twodels-leasefirst"
	rversioncas "stampede/checker/library/case10/right/versioncas"
	rwriterlease "stampede/checker/library/case10/right/writerlease"
	solution "stampede/solutions/case10"
)

func TestCents(t *testing.T) {
	assert.Equal(t, "12.99", cents(1299))
	assert.Equal(t, "9.05", cents(905))
}

// The scenes start the row at version 9, so that their first write makes
// it 10: "9" sorts after "10" as text, which catches a version compared
// as a string.
func TestScenesStartAtVersionNine(t *testing.T) {
	h := harness.New(context.Background(), "stampede/solutions/case10", harness.DefaultBound)
	s, err := newScene(h, nil, 0, fleet.HoldCalls(), fleet.HoldCalls(1))
	require.NoError(t, err)
	defer s.Close()
	assert.Equal(t, int64(9), s.Truth().Version)
	assert.Zero(t, s.commits.Calls(), "the preparation's writes are not counted")
	assert.Greater(t, "9", "10")
}

// The checks of the write's steps and of a restart, in process, on the
// answers they were written for: the reference and the right entries pass
// (the library holds the wrong ones to failing them, each for the reason
// its row says), and each check stays well under a second of CPU time per
// run.
func TestStepsAndRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds fleets")
	}
	for _, c := range []struct {
		name  string
		mk    NewShop
		check func(*harness.H, NewShop) check.Verdict
		fails string // a part of the failure's message; "" for a pass
	}{
		{"solutions/case10", mkShop(solution.New), InvalidateSteps, ""},
		{"solutions/case10", mkShop(solution.New), Restart, ""},
		{"checker/library/case10/right/twodels-leasefirst", mkShop(rtwodelsleasefirst.New), InvalidateSteps, ""},
		{"checker/library/case10/right/evalsha-reload", mkShop(revalshareload.New), Restart, ""},
		{"checker/library/case10/right/versioncas", mkShop(rversioncas.New), InvalidateSteps, ""},
		{"checker/library/case10/right/fencing", mkShop(rfencing.New), Restart, ""},
		{"checker/library/case10/right/writerlease", mkShop(rwriterlease.New), InvalidateSteps, ""},
	} {
		h := harness.New(context.Background(), "stampede/"+c.name, harness.DefaultBound)
		began := cpuTime(t)
		v := c.check(h, c.mk)
		used := cpuTime(t) - began
		if c.fails == "" {
			assert.True(t, v.Pass, "%s: %s %s", c.name, v.Figure, v.Message)
		} else {
			assert.False(t, v.Pass, "%s: %s", c.name, v.Figure)
			assert.Contains(t, v.Message, c.fails, c.name)
		}
		t.Logf("%s: %s (%v of CPU time) %s", c.name, v.Figure, used.Round(time.Millisecond), v.Message)
	}
}

// cpuTime returns the CPU time the process has used.
func cpuTime(t *testing.T) time.Duration {
	var ru syscall.Rusage
	require.NoError(t, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
