package case06

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"stampede/checker/check"
	"stampede/checker/fleet"
	"stampede/checker/harness"
)

// RenewHolderOnlyInfo is case 6's check that a holder that renews its lock
// renews only its own.
var RenewHolderOnlyInfo = check.Info{
	ID: "renew-holder-only",
	Name: "a holder that renews its lock while it reads renews only its own: once its lock has expired and " +
		"another instance holds the shelf's lock, the old holder's renewals leave that lock to expire",
	Catches: "a watchdog that pushes the lock's expiry back with a plain PEXPIRE (wrong/renew-no-token, a blind " +
		"student's answer), which cannot tell its lock from the next holder's: the same trap as a release by " +
		"plain DEL, on the way in",
}

// RenewHolderOnly checks a renewal's token check. Shop-1 takes the lock
// and its query is held; the checker expires the lock, as time would
// under a holder paused past its time to live, and shop-2 takes it, its
// query held too. From then on every command shop-2 sends on the lock
// fails, so that only shop-1 can move its expiry. The shops' clock then
// runs to 100 ms before shop-2's lock expires: the lock must still hold
// shop-2's value and have no more than those 100 ms to live. A shop-1
// that renews nothing passes, as the rule holds.
func RenewHolderOnly(h *harness.H, newShop NewShop) check.Verdict {
	const margin = 100 * time.Millisecond
	sc, err := newHungFleet(h, newShop, 2)
	if err != nil {
		return fleet.Unreachable(err)
	}
	defer sc.Close()
	sc.db.Hold()
	ctx := h.Context()
	sc.visit(0, 1)
	if err := sc.settled(); err != nil {
		return stuckVerdict(err)
	}
	if n, _ := sc.db.Waiting(); n == 0 {
		return check.Failed("no query", "with Redis empty, shop-1's visitor sent the database no query")
	}
	locks, v := lockKeys(sc.Fleet, "shop-1")
	if len(locks) == 0 {
		return v
	}
	names := make([]string, len(locks))
	for i, k := range locks {
		names[i] = k.Name
		if err := sc.World.Delete(ctx, k.Name); err != nil {
			return fleet.Unreachable(err)
		}
	}
	onLock := func(c fleet.Command) bool {
		return slices.ContainsFunc(c.Keys, func(k string) bool { return slices.Contains(names, k) })
	}
	sc.visit(1, 1)
	if err := sc.settled(); err != nil {
		return stuckVerdict(err)
	}
	values, err := sc.World.Values(ctx)
	if err != nil {
		return fleet.Unreachable(err)
	}
	ttls, err := sc.World.TTLs(ctx)
	if err != nil {
		return fleet.Unreachable(err)
	}
	lock := names[0]
	taken, ok := values[lock]
	if n, _ := sc.db.Waiting(); n < 2 || !ok {
		return check.Skipped("not staged: once shop-1's lock had expired, shop-2's visitor did not take the lock " +
			"and read the source")
	}
	left := ttls[lock]
	if left < 0 {
		return check.Skipped("not staged: shop-2's lock has no time to live, so there is no expiry to keep " +
			"(the ttl check's business)")
	}
	if left <= margin {
		return check.Skipped(fmt.Sprintf("not staged: shop-2's lock had only %v to live", left))
	}
	sc.Tap(1).Fail(onLock, ErrConnection, -1)
	since := len(sc.Tap(0).Log())
	if err := sc.Elapse(left - margin); err != nil {
		return stuckVerdict(err)
	}
	var sent []string
	for _, c := range sc.Tap(0).Log()[since:] {
		if onLock(c) {
			sent = append(sent, shorten(c.String()))
		}
	}
	values, err = sc.World.Values(ctx)
	if err != nil {
		return fleet.Unreachable(err)
	}
	ttls, err = sc.World.TTLs(ctx)
	if err != nil {
		return fleet.Unreachable(err)
	}
	now, there := values[lock]
	switch {
	case there && now != taken:
		return check.Failed(fmt.Sprintf("%s rewritten", lock), fmt.Sprintf("shop-1's lock expired while it read, and "+
			"shop-2 took %s; shop-1 then wrote over it (%s). A holder renews only a lock that still holds its own "+
			"token, checked and renewed in one step (a script)", lock, strings.Join(sent, "; ")))
	case there && ttls[lock] > margin+10*time.Millisecond:
		return check.Failed(fmt.Sprintf("%s extended to %v", lock, ttls[lock].Round(time.Millisecond)), fmt.Sprintf(
			"shop-1's lock expired while it read, and shop-2 took %s with %v to live. %v later it should have had %v "+
				"left, and had %v: shop-1, whose lock it no longer was, pushed its expiry back (%s). A renewal has "+
				"the release's trap: check the token and extend in one step, a script that calls PEXPIRE only if the "+
				"lock still holds your token, and stop renewing (and reading) when it does not",
			lock, left.Round(time.Millisecond), (left-margin).Round(time.Millisecond), margin,
			ttls[lock].Round(time.Millisecond), strings.Join(sent, "; ")))
	}
	if len(sent) == 0 {
		// Nothing renewed: the takeover was staged, and the lock kept its
		// expiry, which is the whole rule.
		return check.Passed("shop-1 renews nothing: it sent nothing on the lock after it had passed to shop-2, " +
			"whose lock kept its expiry")
	}
	return check.Passed(fmt.Sprintf("shop-1 sent %s on the lock after it had passed to shop-2; shop-2's lock "+
		"kept its expiry", count(len(sent), "command")))
}
