package case06

import (
	"fmt"
	"time"

	"stampede/checker/check"
	"stampede/checker/fleet"
)

// A lock is told from the other keys a holder writes by what the code does
// with it, not by its name: it is there while the holder rebuilds, and the
// release deletes it (or the next holder finds it changed). A fencing
// counter is there during the rebuild too, but it outlives the release
// with the same value; the shelf comes only after the query. learnLocks
// watches one rebuild, alone, to find which keys behave as the lock.

// learnLocks plays one rebuild on one instance: it holds the query, notes
// the keys, lets the rebuild finish, and notes them again. The keys that
// were there during the rebuild and are gone or changed after it are the
// lock. When no key behaves so (a holder that leaves its lock to expire),
// every key of the rebuild counts as the lock, as before.
func learnLocks(f *Fleet) (map[string]bool, error) {
	g, gate := holdEvery()
	solo, err := newFleet(f.H, f.newShop, 1, g)
	if err != nil {
		return nil, err
	}
	defer solo.Close()
	ctx := f.H.Context()
	v := solo.Visit(0, 1)
	if err := solo.Settle(); err != nil {
		return nil, err
	}
	during, err := solo.World.Values(ctx)
	if err != nil {
		return nil, err
	}
	gate.Open()
	if err := solo.Drive(v.Done, patience); err != nil {
		return nil, err
	}
	after, err := solo.World.Values(ctx)
	if err != nil {
		return nil, err
	}
	locks := map[string]bool{}
	for name, val := range during {
		if now, ok := after[name]; !ok || now != val {
			locks[name] = true
		}
	}
	if len(locks) == 0 {
		for name := range during {
			locks[name] = true
		}
	}
	return locks, nil
}

// shortLock fails a scene whose lock lives less than a rebuild: it expires
// under a healthy holder, and a second instance rebuilds too. On a real
// server such a lock may be gone before the checker looks, on the embedded
// one it is seen with its time to live: either way the verdict is this one.
func shortLock(what string) check.Verdict {
	return check.Failed("lock shorter than a rebuild", fmt.Sprintf("%s: a lock that lives less than a rebuild (%v here) "+
		"expires under a healthy holder, and another instance takes it and rebuilds too. Keep the lock's time to live "+
		"well above a rebuild (the reference uses 2 s)", what, rebuild))
}

// lockKeys returns the lock keys in Redis while a holder's query is held:
// the keys there now that behave as a lock (see learnLocks). No key means
// no lock.
func lockKeys(f *Fleet, whose string) ([]fleet.Key, check.Verdict) {
	out, err := presentLocks(f)
	if err != nil {
		return nil, fleet.Unreachable(err)
	}
	for _, k := range out {
		if !k.Forever && k.TTL < rebuild {
			return nil, shortLock(fmt.Sprintf("%s had %v left to live", k.Name, k.TTL.Round(time.Millisecond)))
		}
	}
	if len(out) > 0 {
		return out, check.Passed("")
	}
	// Nothing there: say what the holder sent that might have been a lock.
	var tried []string
	for _, t := range f.taps {
		for _, c := range t.Log() {
			if c.Conditional() {
				tried = append(tried, shorten(c.String()))
			}
		}
	}
	if len(tried) > 0 {
		return nil, shortLock(fmt.Sprintf("while %s query ran, the lock was already gone, though it had sent %s "+
			"(on a real server Redis's time is real)", whose, tried[0]))
	}
	return nil, check.Failed("no lock", fmt.Sprintf("while %s query ran, Redis held no key: there is no lock for the "+
		"other instances to find. Take SET lock:<shelf> <token> NX PX <ms> before reading the source", whose))
}

// presentLocks returns the keys in Redis now that behave as a lock (see
// learnLocks), learning which those are the first time a scene asks.
func presentLocks(f *Fleet) ([]fleet.Key, error) {
	keys, err := f.World.Keys(f.H.Context())
	if err != nil {
		return nil, err
	}
	if f.locks == nil {
		if f.locks, err = learnLocks(f); err != nil {
			return nil, err
		}
	}
	var out []fleet.Key
	for _, k := range keys {
		if f.locks[k.Name] {
			out = append(out, k)
		}
	}
	return out, nil
}
