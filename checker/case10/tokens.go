package case10

import (
	"strings"

	"stampede/checker/check"
	"stampede/checker/fleet"
	"stampede/checker/harness"
)

// tokensInfo is the check that two servers of a fleet draw different lease
// tokens. It is marked Apart: the grader runs it in two processes started
// alike and compares what each drew.
var tokensInfo = check.Info{
	ID:   "tokens",
	Name: "two servers started alike draw different lease tokens",
	Catches: "lease tokens from a math/rand generator with a fixed seed, or from a counter in memory: different " +
		"within one process, the same in every process of a fleet, so a slow filler on one server passes another's lease",
	Apart: &check.Apart{
		What: "lease token",
		Fix:  "draw each token from crypto/rand (rand.Text), or from a generator seeded from it",
	},
}

// tokenDraws is how many leases a check takes, in each process.
const tokenDraws = 3

// Tokens lets a visitor miss tokenDraws times, each on a scene built
// afresh, and reports as drawn the values of the keys in Redis while its
// read is held (the lease, with a cold cache) that the shop made itself: a
// value a shop sent to Redis that no reply from Redis had held. A value the
// server made (a counter's INCR) is the one shared server's and cannot
// repeat across the fleet's processes. The grader compares the two
// processes' draws (see check.Apart); within one process, slow-leader
// already catches a token shared by every lease.
func Tokens(h *harness.H, newShop NewShop) check.Verdict {
	return fleet.Draws(tokenDraws, "lease", func() ([]string, check.Verdict) { return drawToken(h, newShop) })
}

// drawToken lets shop-1 of a new scene miss, and returns the values in
// Redis that shop-1 made while its read was held.
func drawToken(h *harness.H, newShop NewShop) ([]string, check.Verdict) {
	ctx := h.Context()
	s, err := newScene(h, newShop, 2, fleet.HoldCalls(1), fleet.HoldCalls())
	if err != nil {
		return nil, fleet.Unreachable(err)
	}
	defer s.Close()
	r := s.Read(0)
	if err := s.Settle(); err != nil {
		return nil, stuckVerdict(err)
	}
	keys, err := s.World.Keys(ctx)
	if err != nil {
		return nil, fleet.Unreachable(err)
	}
	var drawn []string
	for _, k := range keys {
		val, ok, err := s.World.Get(ctx, k.Name)
		if err != nil && !strings.Contains(err.Error(), "WRONGTYPE") {
			return nil, fleet.Unreachable(err)
		}
		if ok && fleet.MadeByShop(s.taps, val) {
			drawn = append(drawn, val)
		}
	}
	s.reads.OpenAll()
	if err := s.Drive(r.Done, patience); err != nil {
		return nil, waitVerdict(err, "shop-1's visitor was")
	}
	if p := r.Panicked(); p != "" {
		return nil, check.Failed("", "a visitor's call panicked: "+p)
	}
	return drawn, check.Passed("")
}
