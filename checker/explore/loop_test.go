package explore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"stampede/checker/harness"
	"stampede/checker/point"
)

// size is a scene of the loop's tests: its seed, and how many visitors it
// has left after shrinking.
type size struct{ seed, n uint64 }

func (s size) String() string { return fmt.Sprintf("scene %d of %d visitors", s.seed, s.n) }

// fake returns an explorer whose scene of seed s plays as play says, and
// how many plays it made.
func fake(play func(sc size) Played) (*Explorer[size], *int) {
	plays := 0
	return &Explorer[size]{
		Case: 99, Scenes: 10,
		Draw: func(seed uint64) size { return size{seed, 5} },
		Play: func(_ *harness.H, sc size, _ bool) Played { plays++; return play(sc) },
		Smaller: func(sc size) []size {
			if sc.n == 1 {
				return nil
			}
			return []size{{sc.seed, sc.n - 1}}
		},
		Size: func(sc size) int { return int(sc.n) },
		Noun: "visitors",
	}, &plays
}

func newTestH() *harness.H {
	return harness.New(context.Background(), "stampede/nowhere", harness.DefaultBound)
}

// busy is what a play that never came to rest on a loaded machine finds.
var busy = &harness.Stuck{Cause: harness.Running, Why: "still running after 5s", Inside: 1}

func TestAScenePlayedAgainWhileTheMachineIsBusyThenSetAside(t *testing.T) {
	e, plays := fake(func(sc size) Played {
		if sc.seed == 3 {
			return Played{Stuck: busy}
		}
		return Played{}
	})
	v := e.Run(newTestH(), 1, 10)
	assert.True(t, v.Pass, v.Message)
	assert.Equal(t, 12, *plays, "nine scenes once, the busy one three times")
	assert.Contains(t, v.Figure, "9 scenes from seed 1 (1 set aside")
}

func TestMostScenesSetAsideFails(t *testing.T) {
	e, _ := fake(func(sc size) Played {
		if sc.seed%4 != 0 {
			return Played{Stuck: busy}
		}
		return Played{}
	})
	v := e.Run(newTestH(), 1, 10)
	assert.False(t, v.Pass)
	assert.Contains(t, v.Message, "never came to rest")
}

func TestALoopOfTheShopsFailsAtOnceAsAHang(t *testing.T) {
	loop := &harness.Stuck{Cause: harness.Running, Why: "still running after 5s", Looping: true, Inside: 2, Visiting: 1,
		Places: []string{"1 visitor still running near cases/case01/shop.go:9"}}
	e, plays := fake(func(size) Played { return Played{Stuck: loop} })
	v := e.Run(newTestH(), 7, 10)
	assert.False(t, v.Pass)
	assert.True(t, v.Hung, "a loop stops the grader starting more checks")
	assert.Equal(t, 1, *plays, "a loop is not played again, nor shrunk")
	assert.Contains(t, v.Message, "shop.go:9")
	assert.Contains(t, v.Message, "go run ./shop check 99 --seed 7")
}

func TestADeadlockIsShrunkLikeABrokenRule(t *testing.T) {
	dead := &harness.Stuck{Cause: harness.Deadlocked, Why: "deadlocked", Inside: 3, Visiting: 3}
	e, _ := fake(func(size) Played { return Played{Stuck: dead} })
	v := e.Run(newTestH(), 1, 10)
	assert.False(t, v.Pass)
	assert.False(t, v.Hung)
	assert.Contains(t, v.Message, "shrunk from 5 visitors to 1")
	assert.Contains(t, v.Message, "never came to rest: deadlocked")
}

func TestABrokenRuleIsShrunkAndReplayable(t *testing.T) {
	e, _ := fake(func(sc size) Played {
		if sc.seed == 4 && sc.n >= 2 {
			return Played{Bad: fmt.Sprintf("%d visitors queried", sc.n)}
		}
		return Played{}
	})
	v := e.Run(newTestH(), 1, 10)
	assert.False(t, v.Pass)
	assert.Equal(t, "scene 4 of 10 broke an invariant (seed 4)", v.Figure)
	assert.Contains(t, v.Message, "2 visitors queried.\nThe scene, shrunk from 5 visitors to 2: scene 4 of 2 visitors")
	assert.Contains(t, v.Message, "go run ./shop run 99 --seed 4 --timeline")

	sc, res, shrunk := e.Story(newTestH(), 4)
	assert.True(t, shrunk)
	assert.Equal(t, size{4, 2}, sc)
	assert.Equal(t, "Broken: 2 visitors queried.", res.Verdict())
}

func TestAStuckWithNothingOfTheCodesIsTheMachines(t *testing.T) {
	for _, st := range []*harness.Stuck{
		{Cause: harness.Deadlocked, Inside: 0},
		{Cause: harness.Running, Inside: 4, Visiting: 0},
	} {
		assert.True(t, st.Load(), "%+v", st)
	}
	for _, st := range []*harness.Stuck{
		{Cause: harness.Deadlocked, Inside: 1},
		{Cause: harness.Running, Inside: 4, Visiting: 1},
		{Cause: harness.Running, Inside: 4, Looping: true},
		{Cause: harness.Flood},
	} {
		assert.False(t, st.Load(), "%+v", st)
	}
}

func TestAnUnplayableSceneFailsWithItsError(t *testing.T) {
	e, _ := fake(func(size) Played { return Played{Err: errors.New("the checker could not use Redis: refused")} })
	v := e.Run(newTestH(), 1, 10)
	assert.False(t, v.Pass)
	assert.True(t, strings.HasPrefix(v.Message, "scene 1 (seed 1) could not be played: the checker could not use Redis"), v.Message)
}

// TestPrepareRunsOnceAndNeverUnderASchedule: what a case learns once a run
// must not take points from the first scene's schedule, or `run N --seed
// S` (one play) would play another schedule than the check did.
func TestPrepareRunsOnceAndNeverUnderASchedule(t *testing.T) {
	e, plays := fake(func(size) Played {
		assert.NotNil(t, point.Running(), "a play with points runs under its schedule")
		return Played{}
	})
	e.Points = true
	prepared := 0
	e.Prepare = func(*harness.H) {
		prepared++
		assert.Nil(t, point.Running(), "Prepare ran under a schedule")
	}
	v := e.Run(newTestH(), 1, 3)
	assert.True(t, v.Pass, v.Message)
	assert.Equal(t, 3, *plays)
	assert.Equal(t, 1, prepared, "Prepare runs once, before the first play")
}
