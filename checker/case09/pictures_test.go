package case09

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stampede/checker/case06"
	"stampede/checker/harness"
	"stampede/checker/plot"
	"stampede/shop/catalog"
	solution "stampede/solutions/case09"
)

var update = flag.Bool("update", false, "redraw the chapter's pictures in docs/img")

// TestTwoExpiriesPicture draws chapter 9's picture of the two expiries,
// from what the reference solution does on one instance: a fill, a reader
// while the list is fresh, one just past its logical expiry (served the
// stale list at once, and its rebuild set going), and a reader after the
// rebuild. Each list's physical expiry is read from Redis (its time to
// live); each logical expiry is the checks' 30 s, held to the solution by
// a reader a second before it (no read of the source) and one a second
// after (a read). The test fails when the solution does otherwise, or when
// docs/img/serve-stale.svg is not what it draws now (-update redraws it).
func TestTwoExpiriesPicture(t *testing.T) {
	if testing.Short() {
		t.Skip("plays a fleet on Redis")
	}
	ctx := context.Background()
	h := harness.New(ctx, "stampede/solutions/case09", harness.DefaultBound)
	sc, err := newScene(h, mk(solution.New), 1)
	require.NoError(t, err)
	defer sc.Close()
	require.True(t, sc.fill().Pass)
	listTTL := func() time.Duration {
		ttls, err := sc.World.TTLs(ctx)
		require.NoError(t, err)
		var most time.Duration
		for k, d := range ttls {
			if strings.Contains(k, catalog.Bestsellers) && d > most {
				most = d
			}
		}
		return most
	}
	// at is the time since the fill, in seconds.
	at := func() float64 { return sc.Clock.Now().Sub(sc.filled).Seconds() }
	read := func(d time.Duration) (queried bool) {
		require.NoError(t, sc.until(d))
		before := sc.Reads()
		c := sc.visit(0, 1)
		require.NoError(t, sc.Drive(c.Done, case06.Patience))
		require.NoError(t, sc.settled())
		n, bad := lists(c.Outcomes())
		require.Equal(t, 1, n, "the reader at %v: %s", d, bad)
		return sc.Reads() > before
	}
	gone1 := listTTL().Seconds() // the first list's physical expiry, from the fill
	require.False(t, read(logical-time.Second), "a read a second before the logical expiry read the source")
	require.True(t, read(stale), "a read a second past the logical expiry set no rebuild going")
	staleAt := at()
	require.NoError(t, sc.until(stale+time.Second)) // the rebuild lands
	gone2 := at() + listTTL().Seconds()
	rebuilt := gone2 - gone1 // when the second list was written, since the fill
	require.False(t, read(time.Duration((rebuilt-1)*float64(time.Second))+logical), "the rebuilt list was read again before its logical expiry")

	const span = 100.0
	c := plot.New("Serve stale: each list has two expiries", 720, 260, 0, span, 0, 3)
	c.Axes("seconds since the first fill (the shops' clock)", "", []float64{0, 15, 30, 45, 60, 75, 90}, nil,
		func(x float64) string { return fmt.Sprintf("%.0f", x) }, nil)
	const fresh, grace = "#9be9a8", "#f6d365"
	lane := func(y, written, gone float64, name string) {
		soft := written + logical.Seconds()
		c.Band(written, soft, y, y+0.6, fresh, "fresh: served as it is")
		c.Band(soft, gone, y, y+0.6, grace, "stale: served at once, rebuilt")
		c.Label(gone+1, y+0.22, "start", "#444", "gone")
		c.Label(written, y+0.75, "start", "#222", name)
	}
	lane(1.9, 0, gone1, "the list filled at 0 s")
	lane(0.9, rebuilt, gone2, fmt.Sprintf("the list rebuilt at %.1f s", rebuilt))
	c.Mark(logical.Seconds(), "#1a7f37", "logical expiry")
	c.Mark(gone1, "#cf222e", "physical expiry: Redis drops the key")
	c.Dots([]float64{logical.Seconds() - 1, staleAt}, []float64{0.45, 0.45}, "#222")
	c.Label(logical.Seconds()-2, 0.3, "end", "#222", "a reader: fresh, no read")
	c.Label(staleAt+1, 0.3, "start", "#222", "a reader: stale list at once, and one read of the source")
	plot.Golden(t, "../../docs/img/serve-stale.svg", c.SVG(), *update)
}
