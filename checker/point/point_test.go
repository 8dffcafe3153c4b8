package point_test

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stampede/checker/harness"
	"stampede/checker/point"
	"stampede/checker/stack"
)

// lostUpdate plays two goroutines that each read a counter and write it
// back one higher, with a point before each statement as the grader's
// copy of a student's code has them, under s, and returns the counter.
func lostUpdate(t *testing.T, s *point.Schedule) int64 {
	t.Helper()
	var x atomic.Int64
	var done atomic.Int32
	point.Start(s)
	defer point.Stop()
	for range 2 {
		go func() {
			point.Here()
			v := x.Load()
			point.Here()
			x.Store(v + 1)
			done.Add(1)
		}()
	}
	h := harness.New(context.Background(), "", 10*time.Second)
	for done.Load() < 2 {
		require.NoError(t, h.Quiet(func() bool { return true }))
	}
	require.Zero(t, s.Late(), "every hold was let go by the driver, none by the safety net")
	return x.Load()
}

func TestOneSwitchOpensTheGapBetweenTwoStatements(t *testing.T) {
	require.EqualValues(t, 2, lostUpdate(t, point.Ordered(false)), "with no switch each goroutine runs to its end")
	require.EqualValues(t, 2, lostUpdate(t, point.Ordered(true)))
	s := point.Ordered(false, 1)
	require.EqualValues(t, 1, lostUpdate(t, s), "a switch between the read and the write loses an update")
	require.Equal(t, 4, s.Hits())
	held := s.Held()
	require.NotEmpty(t, held)
	require.Contains(t, held[0].String(), "point_test.go:", "a hold names the line it was at")
}

// TestContendedStepsAreTheOnesASwitchCanUse: in the lost update, the
// first goroutine's step (its write) is taken while the other waits at
// its first point, so it is contended, and a switch there loses the
// update; the second goroutine runs alone, so its step is not.
func TestContendedStepsAreTheOnesASwitchCanUse(t *testing.T) {
	s := point.Ordered(false)
	require.EqualValues(t, 2, lostUpdate(t, s))
	require.Equal(t, []int{1}, s.Contended(), "the first goroutine's write, with the other held")
	require.Equal(t, 2, s.Steps(), "each goroutine's write is a step once both have been seen")
}

func TestWithoutAScheduleAPointDoesNothing(t *testing.T) {
	point.Stop()
	done := make(chan struct{})
	go func() {
		point.Here()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("a point held a goroutine with no schedule in force")
	}
	require.False(t, point.Release())
}

func TestCountHoldsNothing(t *testing.T) {
	s := point.Count()
	point.Start(s)
	defer point.Stop()
	point.Here()
	point.Here()
	require.Equal(t, 2, s.Hits())
	require.False(t, point.Release())
}

func TestTheDriverIsNeverHeld(t *testing.T) {
	s := point.PCT(7, 1)
	point.Start(s)
	defer point.Stop()
	point.Here() // on the goroutine that started the schedule: it must return
	require.Equal(t, 1, s.Hits())
}

func TestASpinningRunnerYields(t *testing.T) {
	// One goroutine spins until the other sets a flag, with a point in
	// its loop: correct under Go's scheduler, which preempts the spinner.
	// Under a schedule the spinner must yield too, or the other, held at
	// its first point, never runs.
	for _, reverse := range []bool{false, true} { // the spinner let go first, in one of the two
		var flag atomic.Bool
		var done atomic.Int32
		s := point.Ordered(reverse)
		point.Start(s)
		go func() {
			point.Here()
			for !flag.Load() {
				point.Here()
			}
			done.Add(1)
		}()
		go func() {
			point.Here()
			flag.Store(true)
			done.Add(1)
		}()
		h := harness.New(context.Background(), "", 10*time.Second)
		for done.Load() < 2 {
			require.NoError(t, h.Quiet(func() bool { return true }))
		}
		require.Zero(t, s.Late())
		point.Stop()
	}
}

func TestSafetyNetIsNamed(t *testing.T) {
	point.Start(point.PCT(1))
	defer point.Stop()
	found := false
	for range 100 {
		buf := make([]byte, 1<<20)
		for _, g := range stack.Parse(string(buf[:runtime.Stack(buf, true)])) {
			found = found || point.SafetyNet(g)
		}
		if found {
			break
		}
		runtime.Gosched()
	}
	if !found {
		t.Fatal("no goroutine of the running schedule was named its safety net")
	}
}

func TestAHeldGoroutineIsNamedAtAPoint(t *testing.T) {
	point.Start(point.PCT(1))
	defer point.Stop()
	done := make(chan struct{})
	go func() {
		point.Here() // held: no driver lets it go until Stop
		close(done)
	}()
	found := false
	for range 1000 {
		buf := make([]byte, 1<<20)
		for _, g := range stack.Parse(string(buf[:runtime.Stack(buf, true)])) {
			found = found || point.AtPoint(g)
		}
		if found {
			break
		}
		time.Sleep(time.Millisecond)
	}
	require.True(t, found, "the held goroutine was not named at a point")
	point.Stop()
	<-done
}

// TestLoosenLetsGoAndHoldsNobodyUntilTightened: a goroutine held at a
// point goes on when the schedule is loosened, passes any number of
// points with nobody letting it go, and is held again at its next point
// once the schedule is tightened.
func TestLoosenLetsGoAndHoldsNobodyUntilTightened(t *testing.T) {
	s := point.Turns()
	point.Start(s)
	defer point.Stop()
	var passed atomic.Int64
	next := make(chan struct{})
	go func() {
		point.Here()
		for range 100 {
			point.Here()
			passed.Add(1)
		}
		<-next
		point.Here()
		passed.Add(1)
	}()
	require.Eventually(t, point.Holding, 10*time.Second, time.Millisecond, "held at its first point")
	tighten := point.Loosen()
	require.Eventually(t, func() bool { return passed.Load() == 100 }, 10*time.Second, time.Millisecond,
		"loose, a hundred points pass with no release")
	tighten()
	close(next)
	require.Eventually(t, point.Holding, 10*time.Second, time.Millisecond, "tightened, held again")
	require.EqualValues(t, 100, passed.Load())
	require.True(t, point.Release())
	require.Eventually(t, func() bool { return passed.Load() == 101 }, 10*time.Second, time.Millisecond)
	require.Zero(t, s.Late())
}

// In lockstep both goroutines read before either writes; with a head
// start of one step the first has written before the turns begin.
func TestLockstepAfterGivesTheFirstAHeadStart(t *testing.T) {
	require.EqualValues(t, 1, lostUpdate(t, point.Lockstep(false)), "in lockstep the update is lost")
	require.EqualValues(t, 1, lostUpdate(t, point.Lockstep(true)))
	require.EqualValues(t, 2, lostUpdate(t, point.LockstepAfter(false, 1)), "a head start of one step: read and write")
}

// A spawner parks at its first point after its go statement until
// Unpark: the goroutine it started runs to its end first, every time.
func TestParkSpawnersHoldsTheSpawnerUntilUnparked(t *testing.T) {
	s := point.ParkSpawners()
	point.Start(s)
	defer point.Stop()
	var x atomic.Int64
	seen := make(chan int64, 1)
	worker := make(chan struct{})
	go func() {
		point.Rank(1) // a visitor: the schedule parks only those the checker named
		point.Spawn()
		go func() {
			point.Here()
			x.Store(1)
			close(worker)
		}()
		point.Here()
		seen <- x.Load()
	}()
	<-worker
	for s.Parked() == 0 {
		time.Sleep(time.Millisecond)
	}
	select {
	case v := <-seen:
		t.Fatalf("the spawner went on while parked (saw %d)", v)
	case <-time.After(20 * time.Millisecond):
	}
	s.Unpark()
	require.EqualValues(t, 1, <-seen, "the spawner saw what the goroutine it started did")
	require.Equal(t, 1, s.Parked())
}

// TestParkAtParksTheNthPointOnly: under ParkAt(n), the goroutine that
// reaches the n-th point parks there until Unpark, and every other point
// passes, before it and after.
func TestParkAtParksTheNthPointOnly(t *testing.T) {
	s := point.ParkAt(2)
	point.Start(s)
	defer point.Stop()
	var steps atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 4 {
			point.Here()
			steps.Add(1)
		}
	}()
	for s.Parked() == 0 {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond)
	require.EqualValues(t, 1, steps.Load(), "parked at its second point, after one step")
	point.Here() // a later point passes
	s.Unpark()
	<-done
	require.EqualValues(t, 4, steps.Load())
	require.Equal(t, 1, s.Parked(), "one goroutine parked, once")
}

// TestAGoroutineArrivingAsTheScheduleStopsGoesOn: a goroutine that
// reached a point while the schedule was being stopped, and told it so
// only after Stop had let every held goroutine go, goes on too: held, it
// would wait for a release nobody gives (make test hung once in this
// package's TestAHeldGoroutineIsNamedAtAPoint, the goroutine in here).
func TestAGoroutineArrivingAsTheScheduleStopsGoesOn(t *testing.T) {
	for i := range 2000 {
		point.Start(point.PCT(uint64(i)))
		done := make(chan struct{})
		go func() {
			point.Here()
			close(done)
		}()
		runtime.Gosched()
		point.Stop()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("play %d: a goroutine that reached a point as the schedule stopped is still held", i)
		}
	}
}
