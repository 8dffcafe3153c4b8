package case11

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"stampede/checker/check"
	"stampede/checker/fleet"
	"stampede/checker/harness"
	"stampede/shop/catalog"
	"stampede/shop/clock"
)

// Shop is what case 11 asks of a shop instance: a read path and a write
// path for a book's price, in cents, and the loop that keeps the
// instance's copy in step, which the server runs until its ctx ends.
type Shop interface {
	fleet.Pricer
	Listen(ctx context.Context) error
}

// NewShop makes one instance of a case 11 shop.
type NewShop func(db *catalog.DB, rdb *redis.Client, clk clock.Clock, channel string) Shop

// book is the row every scene reads and writes, and its prices: the one
// before any write, and the ones the scenes' writes set.
const (
	book     = "The Night Library"
	oldPrice = 1299
	newPrice = 1499
	newest   = 1699
	// oddBook is a book whose name holds the separators a message's
	// format may use: a colon, spaces, a bar, a slash, a comma, a hash,
	// and digits at its end. A name is any string.
	oddBook = "Tales: Old & New | Vol. 2/3, #1 10"
)

// The scenes' sizes and bounds.
const (
	// patience is how far the checker moves the shops' clock for a wait
	// that should end by itself.
	patience = 30 * time.Second
	// maxLocal is the longest an instance may keep its copy, message or
	// not: the contract's bound on what a lost message costs.
	maxLocal = 10 * time.Second
	// channelName starts the name of the channel each scene gives its
	// shops (see newChannel).
	channelName = "prices"
)

// scene is one check's world: shop instances sharing one database, one
// Redis, one channel and the checker's clock, each with its Listen
// running, and gates on the database's row reads and commits.
type scene struct {
	fleet.Stage
	db      *catalog.DB
	reads   *fleet.RowGates
	commits *fleet.RowGates
	// replies holds writes once committed, before the shop hears back
	// (catalog.WithCommittedHook); nil for none.
	replies *fleet.RowGates
	// book is the book the scene's visitors read and write: the constant
	// book, or oddBook.
	book    string
	newShop NewShop
	channel string
	shops   []Shop
	taps    []*fleet.Tap
	// answers are the holds of answers armed (holdAnswer), let go on
	// Close.
	answers []*fleet.Hold
	crowds  []*harness.Crowd[int]
	// listens are the instances' Listen calls; listening ends them.
	listens   []*harness.Crowd[int]
	listening context.Context
	stop      context.CancelFunc
}

// newScene starts n instances, each listening, in a fresh world, and lets
// them settle, so that each has subscribed (if it does) before the scene's
// first visitor.
func newScene(h *harness.H, newShop NewShop, n int, reads, commits *fleet.RowGates) (*scene, error) {
	return newSceneOf(h, newShop, n, setting{reads: reads, commits: commits})
}

// setting is what a scene holds and which book it plays with.
type setting struct {
	reads, commits *fleet.RowGates
	replies        *fleet.RowGates // nil: no write's reply is held
	book           string          // "": the constant book
}

// newSceneOf is newScene with a setting of its own.
func newSceneOf(h *harness.H, newShop NewShop, n int, set setting) (*scene, error) {
	w, err := fleet.Open(h.Context(), fleet.ServerURL())
	if err != nil {
		return nil, err
	}
	if set.book == "" {
		set.book = book
	}
	s := &scene{Stage: fleet.Stage{H: h, World: w, Clock: fleet.NewExactClock()}, reads: set.reads,
		commits: set.commits, replies: set.replies, book: set.book, newShop: newShop, channel: newChannel(w)}
	s.listening, s.stop = context.WithCancel(h.Context())
	s.db = newDB(s)
	// The book's row is written until its version is 9, with no gate
	// armed, so that the scene's first write makes it 10: a version
	// compared as text puts "9" after "10".
	s.commits.Off.Store(true)
	if s.replies != nil {
		s.replies.Off.Store(true)
	}
	for {
		row, _ := s.db.Peek(s.book)
		if row.Version >= 9 {
			break
		}
		if _, err := s.db.SetPrice(h.Context(), s.book, oldPrice); err != nil {
			w.Close()
			return nil, err
		}
	}
	s.commits.Off.Store(false)
	if s.replies != nil {
		s.replies.Off.Store(false)
	}
	for range n {
		s.add()
	}
	if err := s.Settle(); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// newChannel returns a channel name of the scene's own: code that
// publishes or subscribes on a name of its own, not the one New is given,
// hears nothing.
func newChannel(w *fleet.World) string {
	return w.Channel(channelName + ":" + strings.ToLower(rand.Text()[:8]))
}

// newDB returns a scene's database: a read of a row takes the shop's 0.2 s
// on the scene's clock, through the scene's gates; a scene played with
// oddBook has that book too, at the old price.
func newDB(s *scene) *catalog.DB {
	opts := []catalog.Option{catalog.WithCost(catalog.QueryCost), catalog.WithClock(s.Clock),
		catalog.WithReadHook(s.reads.Hook), catalog.WithCommitHook(s.commits.Hook)}
	if s.replies != nil {
		opts = append(opts, catalog.WithCommittedHook(s.replies.Hook))
	}
	if s.book != "" && s.book != book {
		opts = append(opts, catalog.WithBook(s.book, oldPrice))
	}
	return catalog.New(opts...)
}

// add starts one more instance, listening, and returns its index.
func (s *scene) add() int {
	t := fleet.NewTap(s.Clock.Now)
	return s.addOn(t, s.World.Client(t))
}

// addLate starts one more instance whose subscription cannot start until
// the returned subscribe is called: its client has one connection for its
// commands, and every connection it opens after that (its subscription's)
// waits, as on a server whose network to Redis is slow to come up.
func (s *scene) addLate() (int, func()) {
	t := fleet.NewTap(s.Clock.Now)
	rdb := s.World.Client(t)
	_ = rdb.Ping(s.H.Context()).Err() // a pooled connection for its commands
	_, subscribe := t.Cut()
	return s.addOn(t, rdb), subscribe
}

// addOn starts an instance on the client rdb behind tap t.
func (s *scene) addOn(t *fleet.Tap, rdb *redis.Client) int {
	s.taps = append(s.taps, t)
	shop := s.newShop(s.db, rdb, s.Clock, s.channel)
	s.shops = append(s.shops, shop)
	s.listens = append(s.listens, harness.Visit(s.H, 1, func(ctx context.Context, _ int) (int, error) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		defer context.AfterFunc(s.listening, cancel)()
		return 0, shop.Listen(ctx)
	}))
	return len(s.shops) - 1
}

// Close opens every gate and hold, ends every Listen, lets the visitors
// still inside the shops finish, and closes the world.
func (s *scene) Close() {
	s.reads.OpenAll()
	s.commits.OpenAll()
	if s.replies != nil {
		s.replies.OpenAll()
	}
	for _, t := range s.taps {
		t.Disarm()
	}
	for _, a := range s.answers {
		a.Release()
	}
	s.stop()
	_ = s.Drive(func() bool { return fleet.AllDone(s.crowds) && fleet.AllDone(s.listens) }, patience)
	s.World.Close()
}

// Read starts one visitor of instance i asking for the book's price.
func (s *scene) Read(i int) *harness.Crowd[int] { return s.Reads(i, 1) }

// Reads starts n visitors of instance i asking for the book's price.
func (s *scene) Reads(i, n int) *harness.Crowd[int] {
	shop := s.shops[i]
	return s.visit(n, func(ctx context.Context) (int, error) { return shop.Price(ctx, s.book) })
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
		return shop.Price(ctx, s.book)
	})
	return c, leave
}

// Write starts one visitor of instance i setting the book's price.
func (s *scene) Write(i, price int) *harness.Crowd[int] {
	shop := s.shops[i]
	return s.visit(1, func(ctx context.Context) (int, error) { return price, shop.SetPrice(ctx, s.book, price) })
}

// visit starts a crowd and waits until every visitor has started.
func (s *scene) visit(n int, fn func(context.Context) (int, error)) *harness.Crowd[int] {
	c := harness.Visit(s.H, n, func(ctx context.Context, _ int) (int, error) { return fn(ctx) }).Started()
	s.crowds = append(s.crowds, c)
	return c
}

// Warm sends one visitor to each of the instances named, one after the
// other, so that each holds a copy of the old price, and checks what they
// got.
func (s *scene) Warm(instances ...int) check.Verdict {
	for _, i := range instances {
		r := s.Read(i)
		if err := s.Drive(r.Done, patience); err != nil {
			return waitVerdict(err, fmt.Sprintf("shop-%d's first visitor was", i+1))
		}
		if v := gotOne(r, fmt.Sprintf("shop-%d's first visitor", i+1), oldPrice); !v.Pass {
			return v
		}
	}
	return check.Passed("")
}

// WriteDone has instance i set the book's price, drives the scene until
// the write returns, and waits until its message, if it sent one, has
// reached every instance subscribed (see Delivered). The verdict fails
// when the write did not return, or returned an error.
func (s *scene) WriteDone(i, price int) check.Verdict {
	who := fmt.Sprintf("shop-%d's write", i+1)
	m := s.Mark()
	w := s.Write(i, price)
	if err := s.Drive(w.Done, patience); err != nil {
		return waitVerdict(err, who+" was")
	}
	if v := wrote(w, who); !v.Pass {
		return v
	}
	return s.Delivered(m)
}

// mark is where each instance's log and subscriptions stood.
type mark struct{ logs, received []int }

// Mark notes where each instance's log and subscriptions stand, for
// Delivered.
func (s *scene) Mark() mark {
	var m mark
	for _, t := range s.taps {
		m.logs = append(m.logs, len(t.Log()))
		m.received = append(m.received, int(t.Received()))
	}
	return m
}

// Delivered waits until every message published since m has reached the
// instances it was published to. On the embedded server the scene's rest
// already says so; on a real one a message can sit in the kernel while
// its reader looks idle, so Delivered also waits until as many instances
// have received something since m as the PUBLISH that reached the most
// was told it reached (its reply).
func (s *scene) Delivered(m mark) check.Verdict {
	if err := s.Settle(); err != nil {
		return stuckVerdict(err)
	}
	reached := 0
	for i, t := range s.taps {
		if i >= len(m.logs) {
			continue
		}
		for _, c := range t.Log()[m.logs[i]:] {
			if n, err := strconv.Atoi(c.Reply); c.Name == "publish" && err == nil {
				reached = max(reached, n)
			}
		}
	}
	err := s.Drive(func() bool {
		got := 0
		for i, t := range s.taps {
			if i < len(m.received) && int(t.Received()) > m.received[i] {
				got++
			}
		}
		return got >= reached
	}, time.Second)
	if err != nil && !errors.Is(err, fleet.ErrNoBound) {
		return stuckVerdict(err)
	}
	return check.Passed("")
}

// Served sends one visitor to each instance named, and fails unless every
// one of them gets the committed price; why says what went wrong.
func (s *scene) Served(figure string, instances []int, why func(stale []string) string) check.Verdict {
	truth := s.Truth()
	var stale []string
	for _, i := range instances {
		r := s.Read(i)
		if err := s.Drive(r.Done, patience); err != nil {
			return waitVerdict(err, fmt.Sprintf("shop-%d's visitor after the scene was", i+1))
		}
		o := r.Outcomes()[0]
		switch {
		case o.Panic != "":
			return check.Failed(figure, fmt.Sprintf("shop-%d's visitor's call panicked: %s", i+1, o.Panic))
		case o.Err != nil:
			return check.Failed(figure, fmt.Sprintf("shop-%d's visitor after the scene, with nothing else going on, got an error: %v", i+1, o.Err))
		case o.Value != truth.Price:
			stale = append(stale, fmt.Sprintf("shop-%d (%s)", i+1, cents(o.Value)))
		}
	}
	if len(stale) > 0 {
		return check.Failed(figure, why(stale))
	}
	return check.Passed(figure)
}

// Truth returns the book's committed row.
func (s *scene) Truth() catalog.Row {
	row, _ := s.db.Peek(s.book)
	return row
}

// Subscribed returns how many instances have a subscription open.
func (s *scene) Subscribed() int {
	n := 0
	for _, t := range s.taps {
		if t.Subscriptions() > 0 {
			n++
		}
	}
	return n
}

// Published describes what instance i published from place since in its
// log, for a message.
func (s *scene) Published(i, since int) string {
	var out []string
	for _, c := range s.taps[i].Log()[since:] {
		if c.Name == "publish" {
			out = append(out, fleet.Shorten(c.String()))
		}
	}
	if len(out) == 0 {
		return "nothing"
	}
	return strings.Join(out, " | ")
}

// all lists the instances 0 to n-1.
func all(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// holdAnswer holds the answer to instance i's next command that names a
// key, on the shop's goroutine, once Redis has answered it: the reply is in
// the shop's hands, and the shop has not yet acted on it. The shop goes on
// at Release, or when the command's context ends.
func (s *scene) holdAnswer(i int) *fleet.Hold {
	a := s.taps[i].HoldReplyUntilDone(fleet.Command.Keyed)
	s.answers = append(s.answers, a)
	return a
}

// fetchOnceAnswered warms Redis with the old price through instance warm,
// then starts a visitor of shop-2 (instance 1, with no copy) and drives
// the scene until its fetch is held once Redis has answered it
// (holdAnswer). held is false when the visitor was served without asking
// Redis anything; the verdict fails when the warm-up did, or the scene
// never came to rest.
func (s *scene) fetchOnceAnswered(warm int) (answer *fleet.Hold, r *harness.Crowd[int], held bool, v check.Verdict) {
	if v := s.Warm(warm); !v.Pass {
		return nil, nil, false, v
	}
	answer = s.holdAnswer(1)
	r = s.Read(1)
	if err := s.Drive(func() bool { return answer.Reached() || r.Done() }, patience); err != nil {
		return nil, nil, false, waitVerdict(err, "shop-2's visitor was")
	}
	return answer, r, answer.Reached(), check.Passed("")
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
