package harness

import "stampede/checker/check"

// Check is one check of a case, written once: what it checks and what it
// catches (its check.Info, for the report and the registry), and the
// function that decides it for an implementation, N being the case's
// constructor. A case lists its checks in one slice, in the order the
// report prints them; Infos gives its check.Case the descriptions, and
// Decide gives its Bound the functions, so that no check's id is written
// twice.
type Check[N any] struct {
	check.Info
	Run func(h *H, newShop N) check.Verdict
}

// Infos returns the checks' descriptions, in order.
func Infos[N any](checks []Check[N]) []check.Info {
	out := make([]check.Info, len(checks))
	for i, c := range checks {
		out[i] = c.Info
	}
	return out
}

// Decide binds the checks to an implementation's constructor: the map of a
// Bound's Checks, by id.
func Decide[N any](checks []Check[N], newShop N) map[string]func(*H) check.Verdict {
	out := make(map[string]func(*H) check.Verdict, len(checks))
	for _, c := range checks {
		out[c.ID] = func(h *H) check.Verdict { return c.Run(h, newShop) }
	}
	return out
}
