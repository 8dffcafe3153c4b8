package case09

import (
	"fmt"
	"sync/atomic"
	"time"

	"stampede/checker/case06"
	"stampede/checker/check"
	"stampede/checker/fleet"
	"stampede/checker/harness"
)

// realLapse is when staleRenewal's second reader comes on a real server,
// whose clock is not the scene's to the millisecond: after any lock of up
// to 2 s has lapsed unrenewed, and a third of its life more (case 6's
// slow-query comes at 4 s there too).
const realLapse = 4 * time.Second

// staleRenewal is a scene of RefreshDeadline on the stale path's renewals:
// case 6's slow-query stalls the cold holder's renewals, and this the
// background rebuild's. The database hangs; a stale reader on shop-1 sets a
// rebuild going, which takes the lock and queries. From then on shop-1's
// every command stalls on its way, held until the context it was sent on
// ends (stall), or fails at once, as on a connection refused. Unrenewed,
// the lock lapses; a stale reader on shop-2 comes as it does (a third of
// a lock life after, a watchdog's next wake, when the renewals fail at
// once), is served the stale list, and may set a rebuild going: but only
// once shop-1's has given its query up, never two open at once. It
// catches a stale path whose watchdog sends its renewals with no deadline
// of its own or never cancels the rebuild, and a rebuild whose query runs
// on a context the watchdog does not end.
func staleRenewal(h *harness.H, newShop NewShop, stall bool) check.Verdict {
	sc, fail := filledScene(h, newShop, 2)
	if sc == nil {
		return fail
	}
	defer sc.Close()
	sc.Clock.Exact()
	sc.db.Hold()
	if err := sc.until(stale); err != nil {
		return case06.StuckVerdict(err)
	}
	before, err := sc.World.Keys(h.Context())
	if err != nil {
		return fleet.Unreachable(err)
	}
	if v := sc.servedAtOnce(0, stale, "with the database hung"); !v.Pass {
		return v
	}
	if err := sc.settled(); err != nil {
		return case06.StuckVerdict(err)
	}
	if open, _ := sc.db.Waiting(); open != 1 {
		// The scene before stands; this one did not happen, and the
		// figure says so.
		return check.Passed(fmt.Sprintf("not staged: shop-1's stale reader left %d of the shelf's queries open "+
			"where the scene needs one rebuild reading", open))
	}
	// The lock is what the rebuild added: the keys Redis holds now and did
	// not before, the longest-lived of them.
	lapse, err := newestLapse(sc, before)
	if err != nil {
		return fleet.Unreachable(err)
	}
	var first atomic.Pointer[string]
	every := func(c fleet.Command) bool {
		text := c.String()
		first.CompareAndSwap(nil, &text)
		return true
	}
	fault, how := "stalled", "its first command from then on (%s) stalled on its way, held until the context it was sent on ended"
	comeAt, when := lapse, "as the lock lapsed"
	if stall {
		defer sc.Tap(0).HoldUntilDone(every).Release()
	} else {
		sc.Tap(0).Fail(every, case06.ErrConnection, -1)
		fault, how = "failed", "its commands from then on (the first: %s) each failed at once ("+case06.ErrConnection.Error()+")"
		comeAt, when = lapse+lapse/3, "a third of a lock life after it lapsed"
	}
	if fleet.ServerURL() != "" || lapse == 0 {
		comeAt = realLapse
	}
	comeAt += time.Millisecond
	at := sc.Clock.Now().Sub(sc.filled) + comeAt
	if err := sc.until(at); err != nil {
		return case06.StuckVerdict(err)
	}
	if first.Load() == nil {
		return check.Passed("not staged: the rebuild sent Redis nothing while it read (a lock that outlives the " +
			"query), so no renewal " + fault)
	}
	if v := sc.servedAtOnce(1, at, "with the database hung"); !v.Pass {
		return v
	}
	if err := sc.settled(); err != nil {
		return case06.StuckVerdict(err)
	}
	if open, _ := sc.db.Waiting(); open > 1 {
		return check.Failed(fmt.Sprintf("%d queries open at once", open), fmt.Sprintf("the database hung; at %s "+
			"shop-1's stale reader set a rebuild going, which took the lock and queried; %s, and the lock lapsed "+
			"unrenewed. At %s, %s, shop-2's stale reader set a rebuild going too, which took the lock and queried "+
			"while shop-1's query still ran: %d of the shelf's queries open at once. The background rebuild keeps "+
			"its lock as a cold holder does: each renewal on a context that ends when the lock would, and once none "+
			"has landed by then, whether they stalled or failed, the rebuild's query given up (it runs on the "+
			"context the watchdog ends)", sc.at(stale), fmt.Sprintf(how, *first.Load()), sc.at(at), when, open))
	}
	return check.Passed(fmt.Sprintf("a rebuild whose renewals %s gave its query up by the lapse", fault))
}

// newestLapse returns the longest time to live among the keys Redis holds
// now that it did not hold in before (0 when none has one).
func newestLapse(sc *scene, before []fleet.Key) (time.Duration, error) {
	now, err := sc.World.Keys(sc.H.Context())
	if err != nil {
		return 0, err
	}
	old := map[string]bool{}
	for _, k := range before {
		old[k.Name] = true
	}
	var lapse time.Duration
	for _, k := range now {
		if !old[k.Name] && !k.Forever {
			lapse = max(lapse, k.TTL)
		}
	}
	return lapse, nil
}
