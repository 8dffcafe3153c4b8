package case06

import (
	"context"
	"time"

	"stampede/checker/check"
	"stampede/checker/fleet"
	"stampede/checker/harness"
	"stampede/shop/catalog"
)

// What the later Redis cases use of case 6: the fleet, its world and its
// verdicts. Case 9 (serve stale while one rebuilds) plays its scenes on the
// same fleet, and reuses case 6's checks of the lock on a cold miss.

// Patience is how far the checker moves the shops' clock for a wait that
// should end by itself.
const Patience = patience

// ErrOver is what Hold returns once Close has ended the scene.
var ErrOver = errOver

// NewFleet starts n instances in a fresh world on the server at url (""
// for a fresh embedded miniredis; fleet.ServerURL for the one the checks use),
// whose database runs hook at the start of every query (nil for none).
// Queries take cost on the shops' clock (0: instant). The caller opens its
// own gates; Close opens none of them.
func NewFleet(h *harness.H, url string, newShop NewShop, n int, cost time.Duration, hook catalog.Hook) (*Fleet, error) {
	w, err := fleet.Open(h.Context(), url)
	if err != nil {
		return nil, err
	}
	f := start(h, w, holdNone(), newShop)
	opts := []catalog.Option{catalog.WithCost(cost), catalog.WithClock(f.Clock)}
	if hook != nil {
		opts = append(opts, catalog.WithHook(hook))
	}
	f.db = catalog.New(opts...)
	for range n {
		t := fleet.NewTap(nil)
		f.taps = append(f.taps, t)
		f.shops = append(f.shops, newShop(f.db, w.Client(t), f.Clock))
	}
	return f, nil
}

// Tap returns instance i's tap, for a scene that stages faults on the
// instance's commands (fleet.Tap's Fail, Hold, CancelAfter).
func (f *Fleet) Tap(i int) *fleet.Tap { return f.taps[i] }

// DB returns the fleet's database.
func (f *Fleet) DB() *catalog.DB { return f.db }

// VisitWith starts n visitors, visitor i calling fn with a context of its
// own, and returns once each has started.
func (f *Fleet) VisitWith(n int, fn func(ctx context.Context, i int) ([]string, error)) *harness.Crowd[[]string] {
	return f.visit(n, fn)
}

// StuckVerdict fails a check whose visitors never finished.
func StuckVerdict(err error) check.Verdict { return stuckVerdict(err) }

// WaitVerdict fails a check whose visitors did not finish; who says which.
func WaitVerdict(err error, who string) check.Verdict { return waitVerdict(err, who) }

// WatchTTLs makes every instance's tap look at Redis after each command
// that may write, as the ttl check and case 6's explorer do (see
// fleet.World.WatchTTLs and Timeless).
func (f *Fleet) WatchTTLs() func() []fleet.Untimed { return f.World.WatchTTLs(f.taps) }
