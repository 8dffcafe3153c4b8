package case07

import (
	"flag"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"stampede/checker/plot"
)

var update = flag.Bool("update", false, "redraw the chapter's pictures in docs/img")

// TestXFetchPicture draws chapter 7's picture of XFetch's chance to
// recompute against the time left, for the story's 0.2 s query and two
// betas: the curve is the checks' rule (chanceAt), and the dots are what
// the reference solution does. At each time left, fifty shops of the
// solution, each drawing one fixed number of fifty spread evenly over
// [0, 1), are read once: the share that recomputes is the chance, to a
// fiftieth, with no luck in it. The test fails when a dot leaves the
// curve, or when docs/img/xfetch-chance.svg is not what it draws now
// (-update redraws it).
func TestXFetchPicture(t *testing.T) {
	if testing.Short() {
		t.Skip("plays a few thousand reads")
	}
	const draws = 50
	randoms := make([]func() float64, draws)
	for k := range randoms {
		u := (float64(k) + 0.5) / draws
		randoms[k] = func() float64 { return u }
	}
	const most = 1.2 // seconds left, the chart's width
	c := plot.New("XFetch: the chance that one read recomputes, against the time left", 640, 340, 0, most, 0, 1)
	c.Axes("time left before the list expires (s); the query takes 0.2 s", "chance per read",
		[]float64{0, 0.2, 0.4, 0.6, 0.8, 1.0, 1.2}, []float64{0, 0.25, 0.5, 0.75, 1},
		func(x float64) string { return fmt.Sprintf("%.1f", x) }, func(y float64) string { return fmt.Sprintf("%.2f", y) })
	colors := map[float64]string{1: "#1f6feb", 2: "#d1242f"}
	for _, beta := range []float64{1, 2} {
		cfg := shopConfig{cost: 200 * time.Millisecond, ttl: 30 * time.Second, beta: beta}
		var xs, ys []float64
		for i := 0; i <= 120; i++ {
			left := time.Duration(i) * 10 * time.Millisecond
			xs, ys = append(xs, left.Seconds()), append(ys, chanceAt(cfg, left))
		}
		c.Line(xs, ys, colors[beta], beta == 2)
		var dx, dy []float64
		for i := 1; i <= 12; i++ {
			left := time.Duration(i) * 100 * time.Millisecond
			fired, err := probeWith(newH(), solutionShop, cfg, left, randoms, nil)
			require.NoError(t, err)
			got := float64(fired) / draws
			assert.InDelta(t, chanceAt(cfg, left), got, 1.0/draws+1e-9,
				"beta %g, %v left: the solution recomputed in %d of %d reads", beta, left, fired, draws)
			dx, dy = append(dx, left.Seconds()), append(dy, got)
		}
		c.Dots(dx, dy, colors[beta])
	}
	c.Legend([2]string{"beta 1: exp(-left / (0.2 s x 1))", colors[1]}, [2]string{"beta 2: exp(-left / (0.2 s x 2))", colors[2]},
		[2]string{"dots: the reference solution, read", "#444"})
	c.Label(0.62, 0.62, "start", "#444", fmt.Sprintf("with 0.6 s left: %.0f%% (beta 1), %.0f%% (beta 2)",
		100*math.Exp(-3), 100*math.Exp(-1.5)))
	plot.Golden(t, "../../docs/img/xfetch-chance.svg", c.SVG(), *update)
}
