package fleet

import (
	"slices"
	"strings"
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
