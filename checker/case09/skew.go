package case09

import (
	"fmt"
	"time"

	"stampede/checker/case06"
	"stampede/checker/check"
	"stampede/checker/fleet"
	"stampede/checker/harness"
)

// skewedClockInfo is the check that a list's age is judged on Redis's
// clock, the one every instance shares.
var skewedClockInfo = check.Info{
	ID: "skewed-clock",
	Name: "a list's age is Redis's to tell: with one instance's clock 30 s fast and another's 30 s slow, " +
		"no instance rebuilds a list 1 s old, and a list 31 s old is rebuilt whoever wrote it",
	Catches: "a logical expiry written into the value on the writer's clock and compared with the reader's " +
		"(wrong/fresh-until-writer-clock, the reference until the lab's issue 25): a list written by a slow " +
		"instance goes stale at once everywhere, a fast instance rebuilds every list, and a list written by a fast " +
		"instance never goes stale before Redis drops it, so its readers wait; a slack added to that comparison " +
		"(wrong/fresh-until-slack), which a larger skew defeats; and an offset to Redis's TIME measured once " +
		"at startup (wrong/boot-offset), which a clock stepped afterwards defeats",
}

// skew is how far the scenes set an instance's clock off: a host whose
// time synchronisation failed, or a container started from a stale image.
const skew = 30 * time.Second

// SkewedClock checks that whether a list is fresh is judged by Redis's
// clock, not by one instance's. Three instances play each scene: shop-1
// fills the shelf, shop-2's clock is right, shop-3's is off the other way;
// the clocks are stepped apart after New, before the fill.
// In the first, shop-1's clock is 30 s slow and shop-3's 30 s fast: a
// second after the fill one reader of each instance must be served with
// no read of the database, since the list is a second old. In the second,
// shop-1's clock is 30 s fast and shop-3's 30 s slow: 31 s after the fill,
// by Redis's clock, a reader of shop-2 and one of shop-3 must be served at
// once and the list rebuilt, once. It catches a logical expiry written on
// the writer's clock and read on the reader's, with or without a slack,
// and one corrected by an offset measured once at startup.
func SkewedClock(h *harness.H, newShop NewShop) check.Verdict {
	if v := skewedFresh(h, newShop); !v.Pass {
		return v
	}
	if v := skewedStale(h, newShop); !v.Pass {
		return v
	}
	return check.Passed(fmt.Sprintf("with clocks %v apart: a list 1 s old served by all with no rebuild; one %v old "+
		"rebuilt once, whoever wrote it", 2*skew, stale))
}

// skewedFresh is the first scene of SkewedClock: a slow writer, and
// readers of every instance a second later.
func skewedFresh(h *harness.H, newShop NewShop) check.Verdict {
	sc, fail := skewedScene(h, newShop, -skew, 0, skew)
	if sc == nil {
		return fail
	}
	defer sc.Close()
	if err := sc.until(time.Second); err != nil {
		return case06.StuckVerdict(err)
	}
	for i := range sc.shops {
		if v := sc.servedAtOnce(i, time.Second, "a second after the fill"); !v.Pass {
			return v
		}
		if err := sc.settled(); err != nil {
			return case06.StuckVerdict(err)
		}
		if sc.Reads() > 1 {
			return check.Failed(count(sc.Reads(), "read"), fmt.Sprintf("shop-1 filled the shelf (its clock %v slow); a "+
				"second later, by Redis's clock, a reader of shop-%d (%s) came and the database was read again: a list "+
				"a second old was rebuilt. Its age must come from Redis, the one clock the fleet shares: its time to "+
				"live (PTTL, in the same round trip as the GET) tells how long ago it was written. A time written into "+
				"the value, or an offset measured once at startup, is read on a clock of its own and is wrong by the "+
				"clocks' difference", skew, i+1, clockOf(i, -skew, 0, skew)))
		}
	}
	return check.Passed("")
}

// skewedStale is the second scene of SkewedClock: a fast writer, and
// readers of the other two instances inside the grace window.
func skewedStale(h *harness.H, newShop NewShop) check.Verdict {
	sc, fail := skewedScene(h, newShop, skew, 0, -skew)
	if sc == nil {
		return fail
	}
	defer sc.Close()
	if err := sc.until(stale); err != nil {
		return case06.StuckVerdict(err)
	}
	for i := 1; i < len(sc.shops); i++ {
		if v := sc.servedAtOnce(i, stale, "inside the grace window"); !v.Pass {
			return v
		}
	}
	// The rebuild runs behind the readers; let it land.
	if err := sc.Drive(func() bool { return sc.Reads() > 1 && sc.db.Held() == 0 }, time.Second); err != nil {
		return check.Failed(count(sc.Reads(), "read"), fmt.Sprintf("shop-1 filled the shelf (its clock %v fast); %v "+
			"later by Redis's clock, past the logical expiry, readers of shop-2 (right on time) and shop-3 (%v slow) "+
			"were served and the database was not read again: no rebuild, so at %v Redis drops the list and every "+
			"reader waits. Its age must come from Redis, the one clock the fleet shares: its time to live (PTTL, in "+
			"the same round trip as the GET) tells how long ago it was written. A time written into the value, or "+
			"an offset measured once at startup, is read on a clock of its own and is wrong by the clocks' "+
			"difference", skew, stale, skew, physical))
	}
	if err := sc.settled(); err != nil {
		return case06.StuckVerdict(err)
	}
	if q := sc.Reads(); q != 2 {
		return check.Failed(count(q, "read"), fmt.Sprintf("%v after the fill, two readers on two instances found the "+
			"list stale and the database was read %s, for one rebuild: one instance's reader takes the fleet's lock, "+
			"and the other serves the stale list", stale, count(q-1, "time")))
	}
	return check.Passed("")
}

// skewedScene starts one instance per offset, instance i's clock off the
// scene's by offsets[i], and has shop-1 fill the shelf.
func skewedScene(h *harness.H, newShop NewShop, offsets ...time.Duration) (*scene, check.Verdict) {
	sc, err := newSceneSkewed(h, newShop, offsets)
	if err != nil {
		return nil, fleet.Unreachable(err)
	}
	if v := sc.fill(); !v.Pass {
		sc.Close()
		return nil, v
	}
	if sc.Reads() != 1 || len(sc.shops) != len(offsets) {
		sc.Close()
		return nil, check.Failed("", "the fleet did not start as the scene needs")
	}
	return sc, check.Passed("")
}

// clockOf says how instance i's clock is off, for a message.
func clockOf(i int, offsets ...time.Duration) string {
	switch d := offsets[i]; {
	case d > 0:
		return fmt.Sprintf("%v fast", d)
	case d < 0:
		return fmt.Sprintf("%v slow", -d)
	}
	return "right on time"
}
