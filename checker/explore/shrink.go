package explore

import "time"

// ShrinkBudget bounds the time spent shrinking a failing scene. It
// decides how small the reported scene is, never the verdict.
const ShrinkBudget = 3 * time.Second

// Shrink looks for a smaller scene that still breaks a rule. It tries the
// scenes smaller proposes for the scene in hand, keeps the first one that
// breaks reports a broken rule for ("" when it kept every rule, or could
// not tell), and starts over from it, until no candidate breaks a rule or
// ShrinkBudget has passed. It returns the smallest failing scene found
// and the rule it broke; given none, sc and bad.
func Shrink[S any](sc S, bad string, smaller func(S) []S, breaks func(S) string) (S, string) {
	stop := time.Now().Add(ShrinkBudget)
	for better := true; better; {
		better = false
		for _, c := range smaller(sc) {
			if time.Now().After(stop) {
				return sc, bad
			}
			if b := breaks(c); b != "" {
				sc, bad, better = c, b, true
				break
			}
		}
	}
	return sc, bad
}
