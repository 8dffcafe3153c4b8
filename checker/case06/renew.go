package case06

import (
	"errors"
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
		"another instance holds the shelf's lock, the old holder's renewals leave that lock to expire, and it " +
		"gives its query up",
	Catches: "a watchdog that pushes the lock's expiry back with a plain PEXPIRE (wrong/renew-no-token, a blind " +
		"student's answer), which cannot tell its lock from the next holder's: the same trap as a release by " +
		"plain DEL, on the way in; and one that looks only at the renewal's error, so that a 0 (another's token) " +
		"counts as renewed and the old holder reads on beside the new one (wrong/renew-ignores-answer); and one " +
		"that, told so, reads on until its own lock would lapse (wrong/renew-zero-reads-on: a break that leaves " +
		"the switch, not the loop)",
}

// RenewHolderOnly checks a renewal's token check. Shop-1 takes the lock
// and its query is held; the checker expires the lock, as time would
// under a holder paused past its time to live, and shop-2 takes it, its
// query held too. From then on every command shop-2 sends on the lock
// fails, so that only shop-1 can move its expiry. The shops' clock then
// runs to 100 ms before shop-2's lock expires: the lock must still hold
// shop-2's value and have no more than those 100 ms to live. A shop-1
// that renews nothing passes, as the rule holds. Once shop-1's first
// renewal has its answer (the lock holds another's token), shop-1's query
// must end before the clock moves on. Then, once shop-1's own
// lock would have lapsed and a third of its life more has passed (a
// watchdog's next wake), shop-1's query must have ended: it has lost its
// lock. (Shop-2 comes a millisecond after it, so that the checker tells
// their queries apart by when they began.)
func RenewHolderOnly(h *harness.H, newShop NewShop) check.Verdict {
	const margin = 100 * time.Millisecond
	sc, err := newHungFleet(h, newShop, 2)
	if err != nil {
		return fleet.Unreachable(err)
	}
	defer sc.Close()
	sc.db.Hold()
	ctx := h.Context()
	began := sc.Clock.Now() // when shop-1's query begins: the clock stands still until the takeover
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
	// Shop-2 comes a millisecond later, so that its query is told from
	// shop-1's by when it began.
	if err := sc.Elapse(time.Millisecond); err != nil {
		return stuckVerdict(err)
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
	// The first answer shop-1 gets on the lock tells it the lock is
	// another's: its query ends then, before the clock moves on.
	answered := func() (fleet.Command, bool) {
		for _, c := range sc.Tap(0).Log()[since:] {
			// A script Redis did not know, or an error, tells it nothing.
			if onLock(c) && c.Said != "" && !c.NoScript && !strings.HasPrefix(c.Said, "error") {
				return c, true
			}
		}
		return fleet.Command{}, false
	}
	moved := sc.Clock.Now()
	// A shop that renews nothing has nothing asleep on the clock: Drive
	// then stops at once, which is no fault of the shop's.
	err = sc.Drive(func() bool { _, ok := answered(); return ok }, left-margin)
	if stuck := (*harness.Stuck)(nil); errors.As(err, &stuck) && stuck.Cause == harness.Running {
		return stuckVerdict(err)
	}
	if err := sc.settled(); err != nil {
		return stuckVerdict(err)
	}
	// Judged once the lock's own rule is (below): a renewal that wrote
	// over shop-2's lock is the first thing to say.
	var lateQuit *check.Verdict
	if c, ok := answered(); ok && slices.Contains(sc.db.Began(), began) {
		v := check.Failed("shop-1's query still open", fmt.Sprintf("shop-1's lock expired while it read, and shop-2 "+
			"took %s; shop-1's renewal then found shop-2's token (it sent %s, and Redis said %s), yet its query still "+
			"ran: a holder whose renewal finds another token in the lock has lost it, and gives its query up at "+
			"once, or it reads beside the next holder. Where the shops wait: %s", lock, shorten(c.String()), c.Said,
			strings.Join(sc.Places(), "; ")))
		lateQuit = &v
	}
	if err := sc.Elapse(left - margin - sc.Clock.Now().Sub(moved)); err != nil {
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
	if lateQuit != nil {
		return *lateQuit
	}
	// Shop-1's lock is gone, whatever its renewals were told: by the time
	// it would have lapsed, and a watchdog's next wake after that (a third
	// of its life), shop-1 must have given its query up.
	if mine := locks[0]; !mine.Forever {
		lapse := mine.TTL + mine.TTL/3 + 10*time.Millisecond
		if err := sc.Elapse(max(lapse-(left-margin)-time.Millisecond, 0)); err != nil {
			return stuckVerdict(err)
		}
		if slices.Contains(sc.db.Began(), began) {
			renewed := "it sent nothing on the lock after it had passed to shop-2"
			if len(sent) > 0 {
				renewed = "it sent " + strings.Join(sent, "; ")
			}
			return check.Failed("shop-1's query still open", fmt.Sprintf("shop-1's lock (%v to live) expired while "+
				"it read, and shop-2 took %s; %v after shop-1 took its lock, shop-1's query still ran (its renewals: "+
				"%s). A holder whose renewal finds another token in the lock has lost it: give the query up then, as "+
				"when no renewal is confirmed before the lock would expire. Where the shops wait: %s",
				mine.TTL.Round(time.Millisecond), lock, lapse.Round(time.Millisecond), renewed,
				strings.Join(sc.Places(), "; ")))
		}
	}
	if len(sent) == 0 {
		// Nothing renewed: the takeover was staged, and the lock kept its
		// expiry, which is the whole rule.
		return check.Passed("shop-1 renews nothing: it sent nothing on the lock after it had passed to shop-2, " +
			"whose lock kept its expiry, and gave its query up")
	}
	return check.Passed(fmt.Sprintf("shop-1 sent %s on the lock after it had passed to shop-2; shop-2's lock "+
		"kept its expiry, and shop-1 gave its query up", count(len(sent), "command")))
}
