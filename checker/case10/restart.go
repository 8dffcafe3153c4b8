package case10

import (
	"fmt"
	"strings"

	"stampede/checker/check"
	"stampede/checker/fleet"
	"stampede/checker/harness"
)

// restartInfo is the check that a shop survives a Redis restart.
var restartInfo = check.Info{
	ID:   "restart",
	Name: "after Redis restarts, with every key and every script gone, visitors get the database's price and the cache fills again",
	Catches: "scripts loaded once at startup (SCRIPT LOAD) and called with EVALSHA, which gets NOSCRIPT after a restart " +
		"(every fill fails, or is dropped and nothing is cached again); EVAL on NOSCRIPT for some scripts and not " +
		"for another (the write path's); and a script loaded again after the first restart only",
}

// restarts is how many times the restart check restarts Redis: twice, so
// that code which handles the first restart only is caught too.
const restarts = 2

// Restart checks that a fleet keeps working when Redis restarts and loses
// every key and every script (FLUSHALL and SCRIPT FLUSH). It plays on the
// embedded server even when the other checks use a real one: a shared
// server's scripts belong to every client, and other processes would load
// theirs again in the middle of the scene. Three instances each
// serve a visitor, a write changes the price, and each serves a visitor
// again; then Redis restarts, and the same instances (not new ones, which
// would load their scripts afresh) do it all again, twice. Every visitor
// must get the committed price, every write must succeed, and the row must
// be read at most once per round of visitors: the first fills, the others
// hit. It
// catches scripts loaded at startup and called by EVALSHA with no fallback
// on NOSCRIPT, in any one of the shop's scripts, and a fallback that works
// only once.
func Restart(h *harness.H, newShop NewShop) check.Verdict {
	s, err := newSceneOn(h, "", newShop, 3, fleet.HoldCalls(), fleet.HoldCalls())
	if err != nil {
		return fleet.Unreachable(err)
	}
	defer s.Close()
	prices := []int{newPrice, newer, newer + 200}
	for round := 0; round <= restarts; round++ {
		when := "before any restart"
		if round > 0 {
			if err := s.World.Restart(h.Context()); err != nil {
				return fleet.Unreachable(err)
			}
			when = "after Redis restarted"
			if round > 1 {
				when = fmt.Sprintf("after Redis restarted a %s time", ordinal(round))
			}
		}
		if v := s.sweep(when, "with Redis empty"); !v.Pass {
			return v
		}
		w := s.Write(1, prices[round])
		if err := s.Drive(w.Done, patience); err != nil {
			return waitVerdict(err, "shop-2's write, "+when+", was")
		}
		if v := wrote(w, "shop-2's write, "+when+","); !v.Pass {
			return check.Failed("a write "+when, strings.TrimSuffix(v.Message, ".")+". Redis lost its scripts in the restart: a script called by its hash "+
				"(EVALSHA) gets NOSCRIPT, and must be sent again (EVAL, or SCRIPT LOAD and retry; go-redis's "+
				"Script.Run does it)")
		}
		if v := s.sweep(when, "after a write"); !v.Pass {
			return v
		}
	}
	return check.Passed(fmt.Sprintf("%d restarts, at most one read of the row per round of %d visitors", restarts, len(s.shops)))
}

// sweep sends one visitor to each instance of the scene in turn, and holds
// each to the committed price; the row must be read exactly once, by the
// first, whose fill serves the others (or by nobody, when a write filled
// the cache itself).
func (s *scene) sweep(when, what string) check.Verdict {
	before := s.RowReads()
	truth := s.Truth()
	for i := range s.shops {
		c := s.Read(i)
		if err := s.Drive(c.Done, patience); err != nil {
			return waitVerdict(err, fmt.Sprintf("shop-%d's visitor, %s, %s, was", i+1, when, what))
		}
		if v := gotOne(c, fmt.Sprintf("shop-%d's visitor, %s, %s,", i+1, when, what), truth.Price); !v.Pass {
			msg := strings.TrimSuffix(v.Message, ".")
			if what == "after a write" {
				msg += ". The write had returned, and nothing else was going on: a write must leave nothing older " +
					"than its own price, in Redis or in any instance"
			}
			if when != "before any restart" {
				msg += ". A restart empties Redis of keys and of scripts: a script called by its hash (EVALSHA) gets " +
					"NOSCRIPT, and must be sent again (EVAL, or SCRIPT LOAD and retry; go-redis's Script.Run does it)"
			}
			return check.Failed(fmt.Sprintf("shop-%d's visitor %s, %s", i+1, when, what), msg+". Redis held: "+s.Cached())
		}
	}
	// A write path may fill the cache itself (under a lease): then nobody
	// reads the row. More than one read is a cache that does not fill.
	if n := s.RowReads() - before; n > 1 {
		figure := fmt.Sprintf("%s for %d visitors one after another, %s, %s", fleet.Count(n, "read"), len(s.shops), when, what)
		return check.Failed(figure, fmt.Sprintf("%d visitors on %d instances came one after another, %s, %s; the "+
			"row was read %s: the first visitor's fill should have served the others. Is anything stored in Redis "+
			"any more? A script called by its hash (EVALSHA) gets NOSCRIPT once Redis has restarted, and must be "+
			"sent again (EVAL, or SCRIPT LOAD and retry). Redis held: %s",
			len(s.shops), len(s.shops), when, what, fleet.Count(n, "time"), s.Cached()))
	}
	return check.Passed("")
}

// ordinal says "first", "second" or "third".
func ordinal(n int) string {
	switch n {
	case 1:
		return "first"
	case 2:
		return "second"
	case 3:
		return "third"
	}
	return fmt.Sprintf("%dth", n)
}
