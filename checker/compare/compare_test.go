package compare

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"stampede/shop/catalog"
	"stampede/shop/clock"
)

// playAll plays every reference row on w. Every read must succeed, except
// in the rows named in givesUp, whose code answers "try again" to a reader
// who waited past its budget (case 8's and case 10's second); their
// failures must all be that answer.
func playAll(t *testing.T, w Workload, givesUp ...string) map[string]Result {
	t.Helper()
	out := map[string]Result{}
	for _, row := range Reference() {
		res, err := Play(context.Background(), w, row, Options{})
		require.NoError(t, err, row.Technique)
		require.Empty(t, res.Err, row.Technique)
		if slices.Contains(givesUp, row.Technique) && res.Failed > 0 {
			require.Contains(t, res.Problem, "try again", "%s: the only failure allowed is the code's own give-up", row.Technique)
		} else {
			require.Zero(t, res.Failed, "%s: %s", row.Technique, res.Problem)
		}
		out[row.Technique] = res
	}
	return out
}

// TestSeedFigures plays seed 002's worked example at full scale and holds
// each reference solution to the seed's figures: about 2,000 source reads
// with no protection, 100 with single-flight in each server, 1 with the
// Redis lock, and no read waiting with XFetch. The counts are exact, not
// within the tolerance: on virtual time they are facts about the code.
func TestSeedFigures(t *testing.T) {
	w := Default()
	if testing.Short() || raceOn {
		w.Servers, w.Rate = 10, 1000 // the same shape, a tenth of the reads
	}
	rs := playAll(t, w, "leases, rate-limited")
	// Each server misses from its first read after the expiry until its
	// own first load lands a rebuild later: with reads evenly spread,
	// exactly rate x rebuild here.
	inWindow := w.Rate * int(w.Rebuild/time.Millisecond) / 1000

	none := rs["no protection"]
	assert.Equal(t, inWindow, none.Source, "no protection: every read during the rebuild misses")
	assert.Equal(t, inWindow, none.AtOnce, "no protection: all of them at once")
	assert.Equal(t, inWindow, none.Waited)
	assert.False(t, none.Left, "no protection: the loads that began after the write land last")
	assert.Positive(t, none.Stale, "no protection: the loads that began before the write are served until then")

	sf := rs["per-process single-flight"]
	assert.Equal(t, w.Servers, sf.Source, "single-flight: one load per server")
	assert.Equal(t, w.Servers, sf.AtOnce)
	assert.Equal(t, inWindow, sf.Waited, "single-flight: every reader during the rebuild waits for its server's load")
	assert.True(t, sf.LeftPast, "case 1 keeps a list for ever: the old one is never replaced")

	lock := rs["Redis lock"]
	assert.Equal(t, 1, lock.Source, "the Redis lock: one load for the fleet")
	assert.Equal(t, 1, lock.AtOnce)
	assert.GreaterOrEqual(t, lock.Waited, inWindow, "the lock's losers poll, so they wait at least the rebuild")
	assert.True(t, lock.Left, "the stale set: the holder's old list lands after the writer's delete")
	assert.InDelta(t, 30, lock.LeftFor.Seconds(), 1, "and stays for the shared key's time to live")

	x := rs["XFetch"]
	assert.Zero(t, x.Waited, "XFetch: nobody sees a miss")
	assert.Equal(t, w.Servers, x.Source, "XFetch: one early refresh per server (case 7's cache is per process)")
	if w.Servers == Default().Servers {
		// With ten servers the spread is ten draws, and all ten refreshes
		// may overlap; with a hundred, they cannot all.
		assert.Less(t, x.AtOnce, w.Servers, "XFetch: the refreshes are spread out, not all at once")
	}
	assert.True(t, x.Left, "XFetch: no invalidation reaches a server's memory")
	stale := rs["serve stale"]
	assert.Equal(t, 1, stale.Source, "serve stale: one rebuild for the fleet")
	// Those readers' flight polls Redis for the fill, every 25 to 75 ms.
	assert.Less(t, stale.Longest, w.Rebuild-w.WriteAt+80*time.Millisecond,
		"serve stale: only the readers after the write's delete wait, for what is left of the rebuild and a poll")
	assert.True(t, stale.Left, "serve stale: the rebuild that began before the write sets the old list after the delete")
	jitter := rs["TTL jitter, one key"]
	assert.Equal(t, w.Servers, jitter.Source, "jitter on one key: one rebuild per server, as single-flight in each")
	assert.Equal(t, w.Servers, jitter.AtOnce, "the one key's expiry is one moment: every server's rebuild at once")
	assert.Equal(t, inWindow, jitter.Waited, "every reader during the rebuild waits for its server's flight")
	assert.NotEmpty(t, jitter.NoWrite, "the events database has no write to play")
	assert.Zero(t, jitter.Stale)
	assert.False(t, jitter.Left)
	limited := rs["leases, rate-limited"]
	assert.Equal(t, 1, limited.Source, "rate-limited leases: the write ends the only lease, and no other may be had for 10 s")
	assert.Zero(t, limited.Stale, "the price had expired before the write: nothing to keep as the stale value")
	assert.False(t, limited.Left)
	assert.Positive(t, limited.Failed, "every reader of the 10 s is told to try again")
	leases := rs["leases"]
	assert.Equal(t, 2, leases.Source, "leases: the holder's read, refused at its fill, and the new lease's read after the write")
	assert.Equal(t, 2, leases.AtOnce, "the new lease's read starts while the refused one is still running")
	assert.Zero(t, leases.Stale, "leases: no read after the write gets the old price")
	assert.False(t, leases.Left, "leases: the write's delete ends the lease, so the old price is never stored after it")
	// The readers from the expiry until the new fill lands wait. The new
	// lease is taken by the first of the servers' flights to poll after
	// the write's delete, and the fill lands a rebuild later; the longest
	// wait ends at most one poll (75 ms) after it. Each flight polls every
	// 25 to 75 ms, drawn at random, so the chance that none of S polls
	// within g of the delete is about (1-g/50ms)^S: below 1e-6 for g =
	// 700 ms/S (7 ms for 100 servers).
	gap := 700 * time.Millisecond / time.Duration(w.Servers)
	assert.GreaterOrEqual(t, leases.Longest, w.WriteAt+w.Rebuild, "leases: the longest wait runs from the expiry to the new fill")
	assert.LessOrEqual(t, leases.Longest, w.WriteAt+gap+w.Rebuild+75*time.Millisecond, "and one poll at most past it")
	waited := w.Rate * int((w.WriteAt+w.Rebuild)/time.Millisecond) / 1000
	assert.GreaterOrEqual(t, leases.Waited, waited)
	assert.LessOrEqual(t, leases.Waited, waited+w.Rate*int(gap/time.Millisecond)/1000,
		"and the readers of the moment between the delete and the first poll after it")
	cas := rs["versioned compare-and-set"]
	assert.Zero(t, cas.Stale, "versioned compare-and-set: the tombstone refuses the fill that read the old row")
	assert.False(t, cas.Left)
	assert.LessOrEqual(t, cas.AtOnce, 1, "its lock keeps one read at a time for the fleet")
	double := rs["delayed double delete"]
	assert.Positive(t, double.Stale, "delayed double delete: the reads that began before the commit store the old price")
	assert.Equal(t, 2*none.Source, double.Source, "the expiry's stampede, and another when the delayed delete empties the key")
	for name, r := range rs {
		total := 0
		for _, n := range r.Chart {
			total += n
		}
		assert.Equal(t, r.Source, total, "%s: the chart holds every source read", name)
	}
}

// TestFlagsChangeTheWorkload: fewer servers, another rate and another
// rebuild move the figures as the seed's arithmetic says.
func TestFlagsChangeTheWorkload(t *testing.T) {
	w := Default()
	w.Servers, w.Rate, w.Rebuild = 8, 2000, 50*time.Millisecond
	rs := playAll(t, w.Fit(), "leases, rate-limited")
	// Each of 8 servers reads every 4 ms, and misses until its own first
	// load lands, 50 ms after its first read: 13 reads each.
	assert.Equal(t, 8*13, rs["no protection"].Source, "2,000 reads a second for 50 ms, a little more")
	assert.True(t, Matches(rs["no protection"].Source, 100), "within the tolerance of the seed's arithmetic")
	assert.Equal(t, 8, rs["per-process single-flight"].Source)
	assert.Equal(t, 1, rs["Redis lock"].Source)
	assert.Zero(t, rs["XFetch"].Waited)
}

// TestLongRebuild: a rebuild of a second widens the window to ten seconds
// before the expiry, past case 6's local time to live, and every read is
// still played at its own time: no wait is longer than the lock's budget
// and a poll, and XFetch's refreshes all fall inside the window.
func TestLongRebuild(t *testing.T) {
	if testing.Short() || raceOn {
		t.Skip("plays 150,000 reads a row")
	}
	w := Default()
	w.Rebuild = time.Second
	// Case 8's and case 10's readers wait at most a second, as long as
	// this rebuild: those of the expiry's moment are told to try again.
	rs := playAll(t, w.Fit(), "TTL jitter, one key", "leases", "leases, rate-limited", "versioned compare-and-set")
	assert.Positive(t, rs["TTL jitter, one key"].Failed, "case 8's budget of a second runs out as the rebuild lands")
	assert.Positive(t, rs["leases"].Failed, "case 10's readers wait for two rebuilds, the refused one and the new one")
	assert.Zero(t, rs["leases"].Stale, "and still none gets the old price")
	assert.Positive(t, rs["versioned compare-and-set"].Failed, "its readers' budget is a second too")
	assert.Zero(t, rs["versioned compare-and-set"].Stale)
	assert.Equal(t, 1, rs["Redis lock"].Source)
	assert.Less(t, rs["Redis lock"].Longest, 1200*time.Millisecond, "case 6's losers wait a second and a poll at most")
	assert.Equal(t, w.Servers, rs["XFetch"].Source)
	assert.Zero(t, rs["XFetch"].Waited)
}

func TestWorkloadLimits(t *testing.T) {
	for _, w := range []Workload{
		func() Workload { w := Default(); w.Servers = 0; return w }(),
		func() Workload { w := Default(); w.Rate = 50; return w }(),
		func() Workload { w := Default(); w.Rebuild = 0; return w }(),
		func() Workload { w := Default(); w.Rate, w.Rebuild = 100_000, time.Second; return w }(),
	} {
		assert.Error(t, w.Check(), "%+v", w)
	}
	assert.NoError(t, Default().Check())
	assert.Equal(t, Default(), Default().Fit(), "the default window is already fitted to its rebuild")
	long := Default()
	long.Rebuild = time.Second
	assert.Equal(t, 10*time.Second, long.Fit().Before, "XFetch refreshes ln(100) rebuilds early: the window starts ten before")
}

// broken is a shop whose Top does what its field says.
type broken struct {
	top func(ctx context.Context) ([]string, error)
}

func (b broken) Top(ctx context.Context, _ string) ([]string, error) { return b.top(ctx) }

func brokenRow(top func(ctx context.Context) ([]string, error)) Row {
	return Row{Technique: "broken", Open: func(*Env, int) Shop { return broken{top} }}
}

func small() Workload {
	w := Default()
	w.Servers, w.Rate, w.Tail = 2, 100, 3*time.Second
	return w
}

// TestBrokenCodeEndsItsRow: a student's deadlock, endless loop, panic or
// wrong answer ends the row with a reason, never the process or the table.
func TestBrokenCodeEndsItsRow(t *testing.T) {
	var mu sync.Mutex
	mu.Lock() // never unlocked
	block := make(chan struct{})
	defer close(block)
	for _, tc := range []struct {
		name string
		top  func(ctx context.Context) ([]string, error)
		err  string
	}{
		{"deadlock", func(context.Context) ([]string, error) { mu.Lock(); return nil, nil }, "nothing is asleep on the shop's clock"},
		{"channel", func(context.Context) ([]string, error) { <-block; return nil, nil }, "nothing is asleep on the shop's clock"},
		{"panic", func(context.Context) ([]string, error) { panic("boom") }, "a read panicked: boom"},
		// Last: the spinning reader spins on until the test ends.
		{"spin", func(context.Context) ([]string, error) {
			for {
				select {
				case <-block:
					return nil, nil
				default:
				}
			}
		}, "still running after"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			row := brokenRow(tc.top)
			row.Code = "checker/compare" // where the broken code lives, as cases/caseNN would
			res, err := Play(context.Background(), small(), row, Options{Bound: 200 * time.Millisecond})
			require.NoError(t, err)
			assert.Contains(t, res.Err, tc.err)
			if tc.name == "deadlock" {
				assert.Contains(t, res.Err, "checker/compare/compare_test.go:", "the stuck line is named")
				assert.Contains(t, res.Err, "sync.Mutex.Lock")
			}
		})
	}
}

// TestWrongListsAreFailures: a list the catalogue never held is a failed
// read, never a stale one.
func TestWrongListsAreFailures(t *testing.T) {
	res, err := Play(context.Background(), small(), brokenRow(func(context.Context) ([]string, error) {
		return []string{"not a book"}, nil
	}), Options{})
	require.NoError(t, err)
	assert.Empty(t, res.Err)
	assert.GreaterOrEqual(t, res.Failed, res.Reads, "every read of the window failed, and the tail's too")
	assert.Contains(t, res.Problem, "never held")
}

// TestCacheAsideIsCounted: compare's own no-protection code, checked on
// its own: a burst of misses each reads the source, and a hit does not.
func TestCacheAsideIsCounted(t *testing.T) {
	clk := clock.NewFake(opening)
	db := catalog.New(catalog.WithCost(0), catalog.WithClock(clk))
	p := &plain{db: db, clk: clk, ttl: time.Second, cache: map[string]stored{}}
	for range 3 {
		books, err := p.Top(context.Background(), catalog.Bestsellers)
		require.NoError(t, err)
		assert.Equal(t, catalog.Books(catalog.Bestsellers), books)
	}
	assert.Equal(t, 1, db.Queries(catalog.Bestsellers), "a fresh value is served")
	clk.Advance(time.Second)
	_, _ = p.Top(context.Background(), catalog.Bestsellers)
	assert.Equal(t, 2, db.Queries(catalog.Bestsellers), "an expired one is read again")
}

// TestRenderJudgesAgainstTheSeed: the table says "matches" where the
// count is within the tolerance, gives the known reason where a row is
// known to differ, and says DIFFERS where nothing explains it.
func TestRenderJudgesAgainstTheSeed(t *testing.T) {
	w := Default()
	rows := Reference()
	results := []Result{
		{Technique: "no protection", Source: 1950, Reads: 1, Chart: make([]int, w.Buckets)},
		{Technique: "per-process single-flight", Source: 140, Reads: 1, Chart: make([]int, w.Buckets)},
		{Technique: "XFetch", Source: 100, Reads: 1, Chart: make([]int, w.Buckets)},
	}
	var b bytes.Buffer
	Render(&b, w, rows, results)
	out := b.String()
	assert.Contains(t, out, "no protection: 1950 source reads; the example says 2000")
	assert.Contains(t, out, "misses): matches.")
	assert.Contains(t, out, "DIFFERS")
	assert.Contains(t, out, "the count differs, because case 7")
	assert.True(t, Matches(2000, 2000) && Matches(1900, 2000) && !Matches(1899, 2000) && Matches(1, 1) && !Matches(2, 1))
}

// TestBindFileNamesTheAdapter: the generated file of --student calls the
// case's adapter on the student's package.
func TestBindFileNamesTheAdapter(t *testing.T) {
	for _, a := range Cases() {
		src := a.BindFile("stampede/cases/case07", "cases/case07")
		assert.Contains(t, src, "compare."+a.Func+"(")
		assert.Contains(t, src, `impl "stampede/cases/case07"`)
		found := false
		for _, r := range Reference() {
			found = found || r.Technique == a.Technique && r.Case == a.Case
		}
		assert.True(t, found, "case %d's adapter names a reference row", a.Case)
	}
}

// TestStaleHolder: with a rebuild longer than case 6's lock lives, the
// lock expires before each holder's rebuild is done; case 6's flight
// gives its query up with its lock, the next holder starts it over, and
// nothing ever fills.
func TestStaleHolder(t *testing.T) {
	base := Default()
	if testing.Short() || raceOn {
		base.Servers, base.Rate = 10, 1000 // the same shape, fewer reads
	}
	w := StaleHolder(base)
	require.NoError(t, w.Check())
	var lock Row
	for _, r := range Reference() {
		if r.Case == 6 {
			lock = r
		}
	}
	res, err := Play(context.Background(), w, lock, Options{})
	require.NoError(t, err)
	require.Empty(t, res.Err)
	// Case 6's holder renews its lock while it reads: one rebuild, no
	// second holder; its read began before the write, so its fill is the
	// stale set the example's table says a lock does not stop.
	assert.Equal(t, 1, res.AtOnce, "one holder at a time")
	assert.Equal(t, 1, res.Source, "the holder keeps its lock while it reads: one rebuild")
	assert.Positive(t, res.Stale, "the fill of the list read before the write lands after its delete")
	var b bytes.Buffer
	RenderStaleHolder(&b, w, res)
	text := strings.Join(strings.Fields(b.String()), " ")
	assert.Contains(t, text, "no second holder came")
	assert.Contains(t, text, "the stale set")
}

// TestWriteLater: with the write out of its expiry's rebuild, serve stale
// keeps the seed's promise at the expiry (no reader waits) and the waits
// are all the write's.
func TestWriteLater(t *testing.T) {
	base := Default()
	if testing.Short() || raceOn {
		base.Servers, base.Rate = 10, 1000
	}
	w := WriteLater(base)
	require.NoError(t, w.Check())
	var stale Row
	for _, r := range Reference() {
		if r.Case == 9 {
			stale = r
		}
	}
	res, err := Play(context.Background(), w, stale, Options{})
	require.NoError(t, err)
	require.Empty(t, res.Err)
	assert.Zero(t, res.WaitedBefore, "at the expiry the stale list is served while one reader rebuilds")
	assert.Positive(t, res.Waited, "after the write's delete there is nothing stale to serve")
	assert.Equal(t, 2, res.Source, "the expiry's rebuild, and the write's")
	assert.Zero(t, res.Stale)
}
