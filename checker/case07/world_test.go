package case07

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"stampede/checker/harness"
	shipped "stampede/checker/library/case07/shipped"
	"stampede/shop/catalog"
	"stampede/shop/clock"
	solution "stampede/solutions/case07"
)

// These tests run the checks in this process on the shipped case and the
// reference solution, for quick answers while working on the checker. The
// verdicts that count are proved in checker/library, through the worker.

func shippedShop(db *catalog.DB, clk clock.Clock, random func() float64, ttl time.Duration, beta float64) Shop {
	return shipped.New(db, clk, random, ttl, beta)
}

func solutionShop(db *catalog.DB, clk clock.Clock, random func() float64, ttl time.Duration, beta float64) Shop {
	return solution.New(db, clk, random, ttl, beta)
}

func newH() *harness.H {
	return harness.New(context.Background(), "stampede/solutions/case07", harness.DefaultBound)
}

func TestVerdicts(t *testing.T) {
	if testing.Short() {
		t.Skip("plays minutes of virtual traffic")
	}
	for name, c := range map[string]struct {
		mk    New
		fails []string
	}{
		"shipped":  {shippedShop, []string{"no-wait", "delta", "beta", "explore"}},
		"solution": {solutionShop, nil},
	} {
		for _, in := range checks {
			v := in.Run(newH(), c.mk)
			t.Logf("%s %s: %v %s %s", name, in.ID, v.Pass, v.Figure, v.Message)
			assert.Equal(t, !contains(c.fails, in.ID), v.Pass, "%s, %s: %s (%s)", name, in.ID, v.Message, v.Figure)
		}
	}
}

func contains(ids []string, id string) bool {
	for _, s := range ids {
		if s == id {
			return true
		}
	}
	return false
}

func TestStory(t *testing.T) {
	if testing.Short() {
		t.Skip("plays minutes of virtual traffic")
	}
	for name, mk := range map[string]New{"shipped": shippedShop, "solution": solutionShop} {
		t.Run(name, func(t *testing.T) {
			require.NoError(t, Scenario(newH(), io.Discard, nil, mk))
		})
	}
}
