package stack

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const dump = `goroutine 7 [running]:
main.main()
	stampede/checker/worker/main.go:40 +0x1d

goroutine 21 [sync.Mutex.Lock, 2 minutes]:
sync.runtime_SemacquireMutex(0xc000012345?, 0x0?, 0x1?)
	runtime/sema.go:95 +0x25
sync.(*Mutex).Lock(...)
	sync/mutex.go:46
stampede/cases/case05.(*Shop).Top(0xc0000a0000, {0x7a1b20, 0xc0000b4000}, {0x6f0a1c, 0xb})
	stampede/cases/case05/shop.go:31 +0x85
stampede/checker/harness.(*Crowd[...]).visit(0xc0000c0000, 0x3, 0xc0000d0000)
	stampede/checker/harness/crowd.go:60 +0x1a2
created by stampede/checker/harness.Visit[...] in goroutine 7
	stampede/checker/harness/crowd.go:45 +0x1f0

goroutine 22 [chan receive]:
stampede/shop/catalog.(*DB).Top(0xc0000a0100, {0x0, 0x0}, {0x0, 0x0})
	stampede/shop/catalog/catalog.go:90 +0x40
created by stampede/cases/case05.(*Shop).refresh in goroutine 21
	stampede/cases/case05/shop.go:52 +0x99
`

func TestParse(t *testing.T) {
	gs := Parse(dump)
	require.Len(t, gs, 3)
	assert.Equal(t, 21, gs[1].ID)
	assert.Equal(t, "sync.Mutex.Lock", gs[1].State)
	assert.Equal(t, "stampede/cases/case05.(*Shop).Top", gs[1].Frames[2].Func)

	f, ok := gs[1].In("stampede/cases/case05")
	require.True(t, ok)
	assert.Equal(t, "cases/case05/shop.go:31", Where(f, "stampede"))

	f, ok = gs[2].In("stampede/cases/case05")
	require.True(t, ok, "a goroutine the student started is theirs")
	assert.Equal(t, 52, f.Line)

	_, ok = gs[0].In("stampede/cases/case05")
	assert.False(t, ok)
	_, ok = gs[1].In("stampede/cases")
	assert.False(t, ok, "a parent directory is not the package")
}

func TestParked(t *testing.T) {
	for _, s := range []string{"sync.Mutex.Lock", "sync.RWMutex.RLock", "chan receive", "select", "sleep", "sync.WaitGroup.Wait"} {
		assert.True(t, Parked(s), s)
	}
	for _, s := range []string{"running", "runnable", "syscall", "IO wait", "GC assist wait", "semacquire"} {
		assert.False(t, Parked(s), s)
	}
	assert.True(t, Timed("sleep"))
	assert.False(t, Timed("sync.Mutex.Lock"))
}

const raceReport = `==================
WARNING: DATA RACE
Write at 0x00c000120060 by goroutine 9:
  runtime.mapassign_faststr()
      runtime/map_faststr.go:223 +0x0
  stampede/cases/case01.(*Shop).Top()
      stampede/cases/case01/shop.go:50 +0x3c4

Previous read at 0x00c000120060 by goroutine 12:
  runtime.mapaccess2_faststr()
      runtime/map_faststr.go:117 +0x0
  stampede/cases/case01.(*Shop).Top()
      stampede/cases/case01/shop.go:29 +0x8c

Goroutine 9 (running) created at:
  stampede/checker/harness.Visit[...]()
      stampede/checker/harness/crowd.go:45 +0x1f0
==================
==================
WARNING: DATA RACE
Write at 0x00c000120060 by goroutine 10:
  runtime.mapassign_faststr()
      runtime/map_faststr.go:223 +0x0
  stampede/cases/case01.(*Shop).Top()
      stampede/cases/case01/shop.go:50 +0x3c4

Previous read at 0x00c000120060 by goroutine 13:
  stampede/cases/case01.(*Shop).Top()
      stampede/cases/case01/shop.go:29 +0x8c
==================
`

func TestRaces(t *testing.T) {
	rs := Races(raceReport, "stampede/cases/case01")
	require.Len(t, rs, 1, "the same two lines are one race")
	assert.Equal(t, "write at cases/case01/shop.go:50 against read at cases/case01/shop.go:29", rs[0].String("stampede"))
	assert.Contains(t, rs[0].Report, "Previous read at")
}

func TestARaceInEitherOrderIsOneRace(t *testing.T) {
	w := Frame{File: "stampede/cases/case01/shop.go", Line: 50}
	r := Frame{File: "stampede/cases/case01/shop.go", Line: 29}
	a := Race{Access: "write", AccessAt: w, Previous: "read", PreviousAt: r}
	b := Race{Access: "read", AccessAt: r, Previous: "write", PreviousAt: w}
	assert.Equal(t, a.Key(), b.Key())
	assert.NotEqual(t, a.Key(), Race{Access: "write", AccessAt: w, Previous: "write", PreviousAt: w}.Key())
}
