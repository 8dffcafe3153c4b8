package case10

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"stampede/checker/check"
	"stampede/checker/explore"
	"stampede/checker/fleet"
	"stampede/checker/harness"
	"stampede/shop/catalog"
	"stampede/shop/clock"
)

// Shop is what case 10 asks of a shop instance: a read path and a write
// path for a book's price, in cents.
type Shop = fleet.Pricer

// NewShop makes one instance of a case 10 shop.
type NewShop func(db *catalog.DB, rdb *redis.Client, clk clock.Clock) Shop

// book is the row every scene reads and writes, and its prices: the one
// before any write, and the ones the scenes' writes set.
const (
	book     = "The Night Library"
	oldPrice = 1299
	newPrice = 1499
	newer    = 1699
)

// scene is one check's world: shop instances sharing one database, one
// Redis and the checker's clock, with gates on the database's row reads
// (after the row is read, before the reply arrives) and on its commits
// (before the commit).
type scene struct {
	fleet.Stage
	db      *catalog.DB
	reads   *fleet.RowGates
	commits *fleet.RowGates
	newShop NewShop
	shops   []Shop
	taps    []*fleet.Tap
	crowds  []*harness.Crowd[int]
	// name is the book the scene's visitors read and write, when it is not
	// the constant book (see title).
	name string
}

// title is the book the scene's visitors read and write: book, or the
// name a scene was given (newSceneOf).
func (s *scene) title() string {
	if s.name == "" {
		return book
	}
	return s.name
}

// newScene starts n instances in a fresh world. The book's row is first
// written until its version is 9, with no gate armed, so that the scene's
// first write makes it 10: a version compared as text puts "9" after "10".
func newScene(h *harness.H, newShop NewShop, n int, reads, commits *fleet.RowGates) (*scene, error) {
	return newSceneOn(h, fleet.ServerURL(), newShop, n, reads, commits)
}

// newSceneOn is newScene on the server at url, or on a fresh embedded
// miniredis when url is empty.
func newSceneOn(h *harness.H, url string, newShop NewShop, n int, reads, commits *fleet.RowGates) (*scene, error) {
	// An exact clock: a shop's timers that fall due a few milliseconds
	// apart (a keepalive's tick, a read's deadline) wake in their order,
	// never together, so no verdict rests on which of two runs first.
	return newSceneClock(h, url, fleet.NewExactClock(), newShop, n, reads, commits)
}

// newSceneClock is newSceneOn with the shops' clock clk.
func newSceneClock(h *harness.H, url string, clk *fleet.Clock, newShop NewShop, n int, reads, commits *fleet.RowGates) (*scene, error) {
	return newSceneOf(h, url, clk, newShop, n, reads, commits, "")
}

// newSceneOf is newSceneClock whose visitors read and write the book
// named title, at the old price, beside the catalog's ("" for book).
func newSceneOf(h *harness.H, url string, clk *fleet.Clock, newShop NewShop, n int, reads, commits *fleet.RowGates, title string) (*scene, error) {
	w, err := fleet.Open(h.Context(), url)
	if err != nil {
		return nil, err
	}
	s := &scene{Stage: fleet.Stage{H: h, World: w, Clock: clk}, reads: reads, commits: commits, newShop: newShop, name: title}
	opts := []catalog.Option{catalog.WithCost(0), catalog.WithReadHook(reads.Hook), catalog.WithCommitHook(commits.Hook)}
	if title != "" {
		opts = append(opts, catalog.WithBook(title, oldPrice))
	}
	s.db = catalog.New(opts...)
	commits.Off.Store(true)
	for {
		row, _ := s.db.Peek(s.title())
		if row.Version >= 9 {
			break
		}
		if _, err := s.db.SetPrice(h.Context(), s.title(), oldPrice); err != nil {
			w.Close()
			return nil, err
		}
	}
	// Those writes' invalidations were sent long ago.
	for _, inv := range s.db.Unsent() {
		_ = s.db.MarkSent(h.Context(), inv.ID)
	}
	commits.Off.Store(false)
	for range n {
		s.add()
	}
	return s, nil
}

// add starts one more instance, and returns its index.
func (s *scene) add() int {
	t := fleet.NewTap(s.Clock.Now)
	s.taps = append(s.taps, t)
	s.shops = append(s.shops, s.newShop(s.db, s.World.Client(t), s.Clock))
	return len(s.shops) - 1
}

// Close opens every gate and hold, lets the visitors still inside the
// shops finish, so that nothing writes to Redis after it, and closes the
// world.
func (s *scene) Close() {
	s.reads.OpenAll()
	s.commits.OpenAll()
	for _, t := range s.taps {
		t.Disarm()
	}
	_ = s.Drive(func() bool { return fleet.AllDone(s.crowds) }, patience)
	s.World.Close()
}

// KeepAlive keeps every key now in Redis as it is while the scene moves
// the shops' clock, as a paused (not dead) instance keeps its lease. (On a
// real server the World holds every key still in the scene's time, so the
// real time the checker's own work takes cannot expire one either.)
func (s *scene) KeepAlive() error {
	keys, err := s.World.Keys(s.H.Context())
	if err != nil {
		return err
	}
	s.Keep = keys
	return nil
}

// Read starts one visitor of instance i asking for the book's price.
func (s *scene) Read(i int) *harness.Crowd[int] { return s.Reads(i, 1) }

// Reads starts n visitors of instance i asking for the book's price.
func (s *scene) Reads(i, n int) *harness.Crowd[int] {
	shop := s.shops[i]
	return s.visit(n, func(ctx context.Context) (int, error) { return shop.Price(ctx, s.title()) })
}

// ReadLeaving starts one visitor of instance i asking for the book's
// price, and returns with it a leave function that cancels the visitor's
// context, as a server does when its client hangs up.
func (s *scene) ReadLeaving(i int) (*harness.Crowd[int], context.CancelFunc) {
	shop := s.shops[i]
	gone, leave := context.WithCancel(context.Background())
	c := s.visit(1, func(ctx context.Context) (int, error) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		defer context.AfterFunc(gone, cancel)()
		return shop.Price(ctx, s.title())
	})
	return c, leave
}

// ReadWithin starts one visitor of instance i asking for the book's price
// with a deadline d away on the shops' clock, as a server's handler with a
// request timeout does: its context then ends with
// context.DeadlineExceeded, as context.WithTimeout's would.
func (s *scene) ReadWithin(i int, d time.Duration) *harness.Crowd[int] {
	shop := s.shops[i]
	return s.visit(1, func(ctx context.Context) (int, error) {
		visit, end, cancel := explore.NewContext(i, true)
		defer cancel()
		go func() {
			if s.Clock.Sleep(visit, d) == nil {
				end()
			}
		}()
		defer context.AfterFunc(ctx, cancel)()
		return shop.Price(visit, s.title())
	})
}

// Write starts one visitor of instance i setting the book's price.
func (s *scene) Write(i, price int) *harness.Crowd[int] {
	shop := s.shops[i]
	return s.visit(1, func(ctx context.Context) (int, error) { return price, shop.SetPrice(ctx, s.title(), price) })
}

// WriteDone has instance i set the book's price and drives the scene until
// the write returns; the verdict fails when it did not return, or returned
// an error.
func (s *scene) WriteDone(i, price int) check.Verdict {
	who := fmt.Sprintf("shop-%d's write", i+1)
	w := s.Write(i, price)
	if err := s.Drive(w.Done, patience); err != nil {
		return waitVerdict(err, who+" was")
	}
	return wrote(w, who)
}

// visit starts a crowd and waits until every visitor has started.
func (s *scene) visit(n int, fn func(context.Context) (int, error)) *harness.Crowd[int] {
	c := harness.Visit(s.H, n, func(ctx context.Context, _ int) (int, error) { return fn(ctx) }).Started()
	s.crowds = append(s.crowds, c)
	return c
}

// warm has one visitor of instance i, with Redis empty, read the book, so
// that Redis holds the old price: the verdict fails when it did not return
// or got something else.
func (s *scene) warm(i int) check.Verdict {
	c := s.Read(i)
	if err := s.Drive(c.Done, patience); err != nil {
		return waitVerdict(err, "the first visitor, with Redis empty, was")
	}
	return gotOne(c, "the first visitor", oldPrice)
}

// Truth returns the book's committed row.
func (s *scene) Truth() catalog.Row {
	row, _ := s.db.Peek(s.title())
	return row
}

// RowReads returns how many times the book's row has been read.
func (s *scene) RowReads() int { return s.db.RowReads(s.title()) }

// Cached describes what Redis holds for the shop, for a message: every key
// with its value and time to live.
func (s *scene) Cached() string {
	ctx := s.H.Context()
	keys, err := s.World.Keys(ctx)
	if err != nil {
		return "(cannot list the keys: " + err.Error() + ")"
	}
	if len(keys) == 0 {
		return "nothing"
	}
	var out []string
	for _, k := range keys {
		v, ok, err := s.World.Get(ctx, k.Name)
		switch {
		case err != nil:
			v = "?"
		case !ok:
			continue
		}
		out = append(out, fmt.Sprintf("%s = %s (%s)", k.Name, fleet.Shorten(v), ttlText(k)))
	}
	return strings.Join(out, ", ")
}

func ttlText(k fleet.Key) string {
	if k.Forever {
		return "no time to live"
	}
	return fmt.Sprintf("%v to live", k.TTL.Round(time.Millisecond))
}

// Fresh sends one visitor to a new instance once the scene is over, and
// returns what it got: what any visitor would be served from now on.
func (s *scene) Fresh() (harness.Outcome[int], error) {
	c := s.Read(s.add())
	if err := s.Drive(c.Done, patience); err != nil {
		return harness.Outcome[int]{}, err
	}
	return c.Outcomes()[0], nil
}

// sentAfter lists the commands naming a key that instance i sent from
// place since in its log, for a message.
func (s *scene) sentAfter(i, since int) string {
	var sent []string
	for _, c := range s.taps[i].Log()[since:] {
		if len(c.Keys) > 0 {
			sent = append(sent, fleet.Shorten(c.String()))
		}
	}
	if len(sent) == 0 {
		return "nothing"
	}
	return strings.Join(sent, " | ")
}

// The verdicts every Redis case's checks share (fleet/verdicts.go), with
// this case's patience.
var (
	stuckVerdict = fleet.StuckVerdict
	gotOne       = fleet.GotOne
	wrote        = fleet.Wrote
	cents        = fleet.Cents
	describe     = fleet.Describe
)

func waitVerdict(err error, who string) check.Verdict { return fleet.WaitVerdict(err, who, patience) }

// fillerReading has shop-1's visitor miss and read the row (held at the
// reads' gate, if it holds the first call) on a context leave cancels, as
// a visitor who hangs up: v fails when the scene did not settle or the
// visitor never read the row.
func (s *scene) fillerReading() (r *harness.Crowd[int], leave context.CancelFunc, v check.Verdict) {
	r, leave = s.ReadLeaving(0)
	if err := s.Settle(); err != nil {
		return r, leave, stuckVerdict(err)
	}
	if s.reads.Calls() == 0 {
		return r, leave, s.neverRead()
	}
	return r, leave, check.Passed("")
}

// neverRead is the verdict on a shop whose first visitor, with Redis
// empty, never read the row: there was no fill for the scene to play.
func (s *scene) neverRead() check.Verdict {
	return check.Failed("", "shop-1's visitor, with Redis empty, never read the row: "+strings.Join(s.Places(), "; "))
}
