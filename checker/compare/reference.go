package compare

import (
	"stampede/solutions/case01"
	"stampede/solutions/case06"
	"stampede/solutions/case07"
)

// Reference returns the table's rows on the lab's reference solutions, in
// the order the seed's table gives them. The cases still to come each add
// one line here (and one to Cases):
//
//   - case 8, TTL jitter: every server's copy is stored with a jittered time
//     to live, so the warm-up must fill them at one moment and let the
//     jitter spread their expiries (Warm as now; its New will take a random
//     source, as case 7's does).
//   - case 9, serve stale: readers are served the old value while one
//     rebuild runs; the stale columns are its cost.
//   - case 10, leases: a write invalidates the outstanding lease, so the
//     stale-value-left column should read "no" there; its Invalidate must
//     go through the lease's delete, not a plain DEL.
func Reference() []Row {
	return []Row{
		Plain(),
		SingleFlight("per-process single-flight", "solutions/case01", 1, case01.New),
		RedisLock("Redis lock", "solutions/case06", 6, case06.New),
		XFetch("XFetch", "solutions/case07", 7, case07.New),
	}
}
