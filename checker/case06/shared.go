package case06

import (
	"context"
	"fmt"
	"time"

	"stampede/checker/check"
	"stampede/checker/harness"
	"stampede/shop/catalog"
	"stampede/shop/clock"
)

// What the later Redis cases use of case 6: the fleet, its world and its
// verdicts. Case 9 (serve stale while one rebuilds) plays its scenes on the
// same fleet, and reuses case 6's checks of the lock on a cold miss.

// Fleet is a scene of shop instances sharing one database, one Redis and
// the checker's clock (see fleet).
type Fleet = fleet

// Patience is how far the checker moves the shops' clock for a wait that
// should end by itself.
const Patience = patience

// ErrNoBound is what Drive returns when the visitors still wait after its
// limit.
var ErrNoBound = errNoBound

// ErrOver is what Hold returns once Close has ended the scene.
var ErrOver = errOver

// NewFleet starts n instances in a fresh world on the server at url (""
// for a fresh embedded miniredis; ServerURL for the one the checks use),
// whose database runs hook at the start of every query (nil for none).
// Queries take cost on the shops' clock (0: instant). The caller opens its
// own gates; Close opens none of them.
func NewFleet(h *harness.H, url string, newShop NewShop, n int, cost time.Duration, hook catalog.Hook) (*Fleet, error) {
	w, err := openWorld(h.Context(), url)
	if err != nil {
		return nil, err
	}
	f := start(h, w, holdNone(), newShop)
	opts := []catalog.Option{catalog.WithCost(cost), catalog.WithClock(f.clock)}
	if hook != nil {
		opts = append(opts, catalog.WithHook(hook))
	}
	f.db = catalog.New(opts...)
	for range n {
		t := &tap{}
		f.taps = append(f.taps, t)
		f.shops = append(f.shops, newShop(f.db, w.client(t), f.clock))
	}
	return f, nil
}

// ServerURL returns the server the checks use: $REDIS_URL, or "" for the
// embedded one.
func ServerURL() string { return serverURL() }

// OpenWorld checks that the server at url answers, for a story's flags.
func OpenWorld(ctx context.Context, url string) error {
	w, err := openWorld(ctx, url)
	if err != nil {
		return err
	}
	w.Close()
	return nil
}

// Clock returns the shops' clock, which the checker moves.
func (f *fleet) Clock() clock.Clock { return f.clock }

// DB returns the fleet's database.
func (f *fleet) DB() *catalog.DB { return f.db }

// VisitWith starts n visitors, visitor i calling fn with a context of its
// own, and returns once each has started.
func (f *fleet) VisitWith(n int, fn func(ctx context.Context, i int) ([]string, error)) *harness.Crowd[[]string] {
	return f.visit(n, fn)
}

// Now returns the time on the shops' clock.
func (f *fleet) Now() time.Time { return f.clock.Now() }

// Places says where the goroutines running the shop's code are waiting.
func (f *fleet) Places() []string { return f.places() }

// Server names the Redis server, for a figure or a story.
func (f *fleet) Server(ctx context.Context) string { return f.world.Describe(ctx) }

// Embedded reports whether the fleet runs on the embedded miniredis.
func (f *fleet) Embedded() bool { return f.world.embedded() }

// TTLs returns the time to live of each key of the world, by the name the
// shops gave it; a key with none has a negative one.
func (f *fleet) TTLs(ctx context.Context) (map[string]time.Duration, error) {
	keys, err := f.world.Keys(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[string]time.Duration, len(keys))
	for _, k := range keys {
		out[k.name] = k.ttl
		if k.forever {
			out[k.name] = -1
		}
	}
	return out, nil
}

// StuckVerdict fails a check whose visitors never finished.
func StuckVerdict(err error) check.Verdict { return stuckVerdict(err) }

// WaitVerdict fails a check whose visitors did not finish; who says which.
func WaitVerdict(err error, who string) check.Verdict { return waitVerdict(err, who) }

// WorldVerdict fails a check that could not talk to Redis.
func WorldVerdict(err error) check.Verdict { return worldVerdict(err) }

// Values returns the value of every key of the world, by the name the
// shops gave it (keys that are not strings by their type).
func (f *fleet) Values(ctx context.Context) (map[string]string, error) {
	return f.world.snapshot(ctx)
}

// WatchTTLs makes every instance's tap look at Redis after each command
// that may write, as the ttl check and case 6's explorer do, and returns a
// function that lists, as lines of story, each key seen there with no time
// to live and the command after which it was seen so.
func (f *fleet) WatchTTLs() func() []string {
	seen := f.watchTTLs()
	return func() []string {
		var out []string
		for _, u := range seen() {
			out = append(out, fmt.Sprintf("shop-%d sent %q, and right after it %s had no time to live", u.shop+1, u.sent, u.key))
		}
		return out
	}
}
