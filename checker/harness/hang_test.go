package harness

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"stampede/checker/stack"
)

func TestAHangBoundExcusesOnlyAStarvedProcess(t *testing.T) {
	ready := []stack.Goroutine{{ID: 7, State: "runnable"}}
	parked := []stack.Goroutine{{ID: 7, State: "chan receive"}}
	w := newHang(time.Minute)
	if !w.cpuOK {
		t.Skip("the system does not tell CPU time")
	}
	// No CPU time used since the wait began: a goroutine ready to run was
	// starved; a parked one was not.
	assert.True(t, w.starved(ready))
	assert.False(t, w.starved(parked))

	// A process that used the bound's CPU time was not starved, whatever
	// it was doing.
	busy := newHang(time.Millisecond)
	for start, _ := CPUTime(); ; {
		if now, _ := CPUTime(); now-start > 2*time.Millisecond {
			break
		}
	}
	assert.False(t, busy.starved(ready))

	// Past the clock's bound: a parked process is past it at once, a
	// starved one only after starvedBounds bounds.
	old := hang{start: time.Now().Add(-2 * time.Second), bound: time.Second, cpuOK: true}
	old.cpu, _ = CPUTime()
	assert.True(t, old.past(func() []stack.Goroutine { return parked }))
	assert.False(t, old.past(func() []stack.Goroutine { return ready }))
	old.start = time.Now().Add(-(starvedBounds + 1) * time.Second)
	assert.True(t, old.past(func() []stack.Goroutine { return ready }))
	assert.False(t, (hang{start: time.Now(), bound: time.Second}).past(nil), "within the bound, nothing is asked")
}
