package shelves

import "stampede/checker/harness"

// finish waits until every crowd has returned, with the hang bound as the
// only limit.
//
// It does not use Crowd.Wait, whose deadlock verdict trusts three
// snapshots in a row in which every visitor is parked. A visitor that
// starts a garbage collection while a snapshot is stopping the world waits
// in the runtime's "semacquire", which counts as parked; on a loaded
// machine three snapshots can catch it there, and Wait would call a right
// answer deadlocked. The checks here run hundreds of bursts, so they wait
// for the visitors to be done instead. A real deadlock is still reported,
// with where each visitor is stuck, at the hang bound.
func finish(h *harness.H, crowds ...interface{ Done() bool }) error {
	return h.Settled(func() bool {
		for _, c := range crowds {
			if !c.Done() {
				return false
			}
		}
		return true
	})
}
