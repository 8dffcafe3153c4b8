package library

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"stampede/checker"
	"stampede/checker/check"
)

// TestMaybesAreOnChecksThatVary holds every maybe of the library to a check
// the grader runs each time it is asked to (check.Info.Varies), or to an
// explorer, whose one run plays hundreds of scenes. Any other check runs
// once for every check.OnceEvery runs of those, on the word that it gives
// an answer one verdict in every run; a maybe is the library saying that
// it does not.
func TestMaybesAreOnChecksThatVary(t *testing.T) {
	for n, es := range entries {
		c, ok := checker.Find(n)
		require.True(t, ok, "case %d", n)
		for _, e := range es {
			for id := range e.maybe {
				in, ok := c.Check(id)
				if !assert.True(t, ok, "case%02d/%s: a maybe on %q, which case %d has no check of", n, e.dir, id, n) {
					continue
				}
				assert.True(t, in.Varies || in.Scenes,
					"case%02d/%s's verdict on %s is a maybe, but the grader runs that check once for every %d runs "+
						"of the checks that vary: mark it Varies", n, e.dir, id, check.OnceEvery)
			}
		}
	}
}
