package case06

import (
	"stampede/checker/check"
	"stampede/checker/fleet"
	"stampede/checker/harness"
)

// tokensInfo is the check that two servers of a fleet draw different lock
// tokens. It is marked Apart: the grader runs it in two processes started
// alike and compares what each drew.
var tokensInfo = check.Info{
	ID:   "tokens",
	Name: "two servers started alike draw different lock tokens",
	Catches: "tokens from a math/rand generator with a fixed seed, or from a counter in memory: " +
		"unique within one process, the same in every process of a fleet",
	Apart: &check.Apart{
		What: "lock token",
		Fix:  "draw each token from crypto/rand (rand.Text), or from a generator seeded from it",
	},
}

// tokenDraws is how many times a scene takes the lock, in each process.
const tokenDraws = 3

// Tokens takes the lock tokenDraws times, each in a fleet of two built
// afresh, and reports as drawn each lock value the shops made themselves:
// a value a shop sent to Redis that no reply from Redis had held. A value
// the server made (a counter's INCR) comes from the one server the whole
// fleet shares and cannot repeat across its processes, so it is not the
// processes' to compare. The grader compares the two processes' draws
// (see check.Apart); within one process, holder-only already catches a
// token shared by every instance.
func Tokens(h *harness.H, newShop NewShop) check.Verdict {
	return fleet.Draws(tokenDraws, "lock", func() ([]string, check.Verdict) { return drawToken(h, newShop) })
}

// drawToken lets shop-1 of a new fleet take the lock, and returns the
// values of the lock keys that shop-1 made.
func drawToken(h *harness.H, newShop NewShop) ([]string, check.Verdict) {
	ctx := h.Context()
	g, gts := holdNth(1)
	f, err := newFleet(h, newShop, 2, g)
	if err != nil {
		return nil, fleet.Unreachable(err)
	}
	defer f.Close()
	a := f.Visit(0, 1)
	if err := f.Settle(); err != nil {
		return nil, stuckVerdict(err)
	}
	locks, v := lockKeys(f, "shop-1's")
	if !v.Pass {
		return nil, v
	}
	var drawn []string
	for _, l := range locks {
		val, ok, err := f.World.Get(ctx, l.Name)
		if err != nil {
			return nil, fleet.Unreachable(err)
		}
		if ok && fleet.MadeByShop(f.taps, val) {
			drawn = append(drawn, val)
		}
	}
	gts[0].Open()
	if err := f.Drive(a.Done, patience); err != nil {
		return nil, waitVerdict(err, "shop-1's visitor was")
	}
	if p := a.Panicked(); p != "" {
		return nil, check.Failed("", "a visitor's call panicked: "+p)
	}
	return drawn, check.Passed("")
}
