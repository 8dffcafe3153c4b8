package fleet

import (
	"fmt"
	"slices"
	"strings"

	"stampede/checker/check"
)

// MadeByShop reports whether val came from a shop rather than from Redis:
// it was an argument of a command one of taps saw, and no reply from Redis
// had held it. The token checks of the Redis cases compare such values
// across two processes started alike (see check.Apart): a value the server
// made, such as a counter's INCR, comes from the one server a whole fleet
// shares and cannot repeat across its processes.
func MadeByShop(taps []*Tap, val string) bool {
	sent := false
	for _, t := range taps {
		for _, c := range t.Log() {
			if c.Reply != "" && strings.Contains(c.Reply, val) {
				return false
			}
			sent = sent || slices.Contains(c.Args, val)
		}
	}
	return sent
}

// Draws runs draw n times, each on a scene of its own, and passes with
// every value the draws made as the verdict's Drawn, sorted and once each,
// for the grader to compare across the two processes of a check marked
// Apart; the first draw that fails is the verdict. what names what one
// draw took, for the figure ("lock").
func Draws(n int, what string, draw func() ([]string, check.Verdict)) check.Verdict {
	var drawn []string
	for range n {
		vals, v := draw()
		if !v.Pass {
			return v
		}
		drawn = append(drawn, vals...)
	}
	v := check.Passed(fmt.Sprintf("%d %ss taken", n, what))
	slices.Sort(drawn)
	v.Drawn = slices.Compact(drawn)
	return v
}
