package case10

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"stampede/checker/fleet"
	"stampede/checker/harness"
	"stampede/shop/catalog"
	"stampede/shop/clock"
)

// The story's numbers, as in the chapter: the write's transaction takes
// 3 ms, the read's query 9 ms with its round trip, and a price lives 30 s.
const (
	storyTxn   = 3 * time.Millisecond
	storyQuery = 9 * time.Millisecond
	storyTTL   = 30 * time.Second
)

// Scenario plays the story: at 09:00:00.000 the price of a book changes
// while a read of it is on its way. It tells three races on three write
// paths written the usual ways, each with its timeline, then plays the two
// timelines on the code under test.
func Scenario(ctx context.Context, w io.Writer, args []string, newShop NewShop, pkg string) error {
	fs := flag.NewFlagSet("run 10", flag.ContinueOnError)
	var sf fleet.StoryFlags
	if err := sf.Parse(ctx, fs, args, w); err != nil {
		return err
	}
	if sf.Seed != 0 {
		return explorer(newShop).Replay(harness.New(ctx, pkg, harness.DefaultBound), w, sf.Seed, sf.Timeline)
	}
	races := []struct {
		title string
		warm  bool
		make  NewShop
		after string
	}{
		{"Race 1: delete before the commit (the price is in Redis when the write begins)", true, model(deleteFirst),
			"The read came between the delete and the commit, read the row the write had not yet changed, and stored it."},
		{"Race 2: set the new price on write (Redis is empty when the read misses)", false, model(setAfter),
			"The write did its part at .003; the read's SET, built from a row read at .000, landed last and won."},
		{"Race 3: delete after the commit, and nothing more (Redis is empty when the read misses)", false, model(deleteAfter),
			"The delete at .003 found nothing to delete: the old price was still on its way in the read's reply. This is the stale set."},
	}
	fmt.Fprintf(w, "At 09:00:00.000 the price of %q changes from %s to %s: the write's\n", book, cents(oldPrice), cents(newPrice))
	fmt.Fprintf(w, "transaction takes %d ms. A read of the price comes at the same moment; its query takes %d ms.\n",
		storyTxn.Milliseconds(), storyQuery.Milliseconds())
	fmt.Fprintf(w, "A price lives %.0f s in Redis.", storyTTL.Seconds())
	if sf.URL == "" {
		fmt.Fprintf(w, " Redis: embedded miniredis (--redis redis://HOST:PORT/DB, or %s, for a real server).", fleet.URLVar)
	}
	fmt.Fprint(w, "\n\n")
	for _, r := range races {
		p, err := play(ctx, sf.URL, r.make, r.warm)
		if err != nil {
			return err
		}
		fmt.Fprintln(w, r.title)
		p.print(w)
		fmt.Fprintf(w, "  %s\n\n", r.after)
	}
	fmt.Fprintln(w, "This code, on the same two timelines:")
	stale := 0
	for _, warm := range []bool{true, false} {
		p, err := play(ctx, sf.URL, newShop, warm)
		if err != nil {
			return err
		}
		if warm {
			fmt.Fprintln(w, "The price is in Redis when the write begins (race 1's timeline)")
		} else {
			fmt.Fprintln(w, "Redis is empty when the read misses (races 2 and 3's timeline)")
		}
		p.print(w)
		fmt.Fprintln(w)
		if p.stale() {
			stale++
		}
	}
	if stale == 0 {
		fmt.Fprintln(w, "Nothing stale survives: after each write, Redis holds the new price or nothing.")
	} else {
		fmt.Fprintf(w, "The old price survives the write on %d of the 2 timelines.\n", stale)
	}
	return nil
}

// played is what one timeline did.
type played struct {
	events []event
	commit time.Time // when the write committed
	// What Redis held for the price at the end, and for how long after.
	value string
	held  bool
	ttl   time.Duration
	end   time.Time
	// errs are the visitors' errors.
	errs []string
}

type event struct {
	at   time.Time
	who  string
	what string
}

// stale reports whether Redis held a price other than the committed one.
func (p played) stale() bool { return p.held && strings.Contains(p.value, strconv.Itoa(oldPrice)) }

func (p played) print(w io.Writer) {
	for _, e := range p.events {
		fmt.Fprintf(w, "  %s  %-5s  %s\n", e.at.Format(".000"), e.who, e.what)
	}
	for _, e := range p.errs {
		fmt.Fprintf(w, "  %s\n", e)
	}
	switch {
	case !p.held:
		fmt.Fprintf(w, "  Redis holds no price: the next read fetches %s, the committed price.\n", cents(newPrice))
	case p.stale():
		until := p.end.Add(p.ttl)
		fmt.Fprintf(w, "  Redis holds %s until %s: the old price for %.1f s after the commit.\n",
			price(p.value), until.Format("15:04:05.000"), until.Sub(p.commit).Seconds())
	default:
		fmt.Fprintf(w, "  Redis holds %s, the committed price.\n", price(p.value))
	}
}

// price prints a stored price: in cents if the code stored a number, else
// as stored.
func price(v string) string {
	if n, err := strconv.Atoi(v); err == nil {
		return cents(n)
	}
	return strconv.Quote(fleet.Shorten(v))
}

// play plays one timeline on a fresh Redis, with virtual time: the write
// begins at .000 and commits at .003; the read misses at .000, just after
// the write began, and its query returns at .009. With warm, Redis holds
// the old price first.
func play(ctx context.Context, url string, newShop NewShop, warm bool) (played, error) {
	wd, err := fleet.Open(ctx, url)
	if err != nil {
		return played{}, err
	}
	defer wd.Close()
	clk := fleet.NewExactClock()
	var p played
	var mu sync.Mutex
	note := func(who, what string) {
		mu.Lock()
		p.events = append(p.events, event{at: clk.Now(), who: who, what: what})
		mu.Unlock()
	}
	var db *catalog.DB
	db = catalog.New(catalog.WithCost(storyQuery), catalog.WithClock(clk),
		catalog.WithReadHook(func(_ context.Context, b string) error {
			row, _ := db.Peek(b)
			msg := fmt.Sprintf("reads the row: %s, version %d", cents(row.Price), row.Version)
			if row.Price == oldPrice && clk.Now().Before(fleet.Start().Add(storyTxn)) {
				msg += " (the write has not committed yet)"
			}
			note("read", msg)
			return nil
		}),
		catalog.WithCommitHook(func(ctx context.Context, b string) error {
			note("write", fmt.Sprintf("begins: %s becomes %s", cents(oldPrice), cents(newPrice)))
			if err := clk.Sleep(ctx, storyTxn); err != nil {
				return err
			}
			row, _ := db.Peek(b)
			note("write", fmt.Sprintf("commits: %s, version %d", cents(newPrice), row.Version+1))
			mu.Lock()
			p.commit = clk.Now()
			mu.Unlock()
			return nil
		}))
	shop := func(who string) Shop {
		t := fleet.NewTap(clk.Now)
		t.Note(func(c fleet.Command) {
			if c.NoScript || len(c.Keys) == 0 {
				return
			}
			args := slices.Clone(c.Args)
			switch {
			case c.Scripted() && strings.HasPrefix(c.Name, "evalsha") && len(args[0]) > 8:
				args[0] = args[0][:8]
			case c.Scripted():
				args[0] = "<script>"
			}
			note(who, fleet.Shorten(strings.ToUpper(c.Name)+" "+strings.Join(args, " "))+" -> "+fleet.Shorten(c.Said))
		})
		return newShop(db, wd.Client(t), clk)
	}
	if warm {
		key, value, err := learnPrice(ctx, url, newShop)
		if err != nil {
			return played{}, err
		}
		if err := wd.Set(ctx, key, value, storyTTL); err != nil {
			return played{}, err
		}
	}
	writer, reader := shop("write"), shop("read")
	var wg sync.WaitGroup
	errs := make([]error, 2)
	wg.Add(1)
	go func() {
		defer wg.Done()
		errs[0] = writer.SetPrice(ctx, book, newPrice)
	}()
	done := make(chan struct{})
	// The read comes once the write has begun: at rest, at .000.
	if err := stage(ctx, wd, clk).Settle(); err != nil {
		return played{}, err
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, errs[1] = reader.Price(ctx, book)
	}()
	go func() { wg.Wait(); close(done) }()
	if err := drive(ctx, wd, clk, done); err != nil {
		return played{}, err
	}
	for i, err := range errs {
		if err != nil {
			p.errs = append(p.errs, fmt.Sprintf("the %s got an error: %v", []string{"write", "read"}[i], err))
		}
	}
	p.end = clk.Now()
	if err := p.look(ctx, wd); err != nil {
		return played{}, err
	}
	slices.SortStableFunc(p.events, func(a, b event) int { return a.at.Compare(b.at) })
	return p, nil
}

// priceKey is the key the story's models use.
const priceKey = "price:" + book

// learnPrice finds where and how the code keeps the old price in Redis,
// for a timeline that starts with it there: one read, on a Redis of its
// own, and the key that then holds the old price, with its value. The code
// names its keys as it likes (price:{<book>}, cache:<book>, ...); one that
// keeps nothing is given priceKey, which it will never read.
func learnPrice(ctx context.Context, url string, newShop NewShop) (key, value string, err error) {
	wd, err := fleet.Open(ctx, url)
	if err != nil {
		return "", "", err
	}
	defer wd.Close()
	clk := fleet.NewExactClock()
	db := catalog.New(catalog.WithCost(storyQuery), catalog.WithClock(clk))
	shop := newShop(db, wd.Client(fleet.NewTap(clk.Now)), clk)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = shop.Price(ctx, book)
	}()
	if err := drive(ctx, wd, clk, done); err != nil {
		return "", "", err
	}
	keys, err := wd.Keys(ctx)
	if err != nil {
		return "", "", err
	}
	for _, k := range keys {
		if v, ok, err := wd.Get(ctx, k.Name); err == nil && ok && strings.Contains(v, strconv.Itoa(oldPrice)) {
			return k.Name, v, nil
		}
	}
	return priceKey, strconv.Itoa(oldPrice), nil
}

// look finds what Redis holds for the price at the end of a timeline. The
// code under test may name its keys as it likes and store more than the
// price, so every key is read: one whose value holds the old price is a
// stale price, else one that holds the new price is the fresh one.
func (p *played) look(ctx context.Context, wd *fleet.World) error {
	keys, err := wd.Keys(ctx)
	if err != nil {
		return err
	}
	for _, k := range keys {
		v, ok, err := wd.Get(ctx, k.Name)
		if err != nil || !ok {
			continue // not a string, or gone
		}
		switch {
		case strings.Contains(v, strconv.Itoa(oldPrice)):
			p.value, p.held, p.ttl = v, true, k.TTL
			return nil
		case strings.Contains(v, strconv.Itoa(newPrice)):
			p.value, p.held, p.ttl = v, true, k.TTL
		}
	}
	return nil
}

// stage is the fleet's stage of a timeline: its Settle and Drive are the
// story's rest and its moves of the clocks.
func stage(ctx context.Context, wd *fleet.World, clk *fleet.Clock) *fleet.Stage {
	return &fleet.Stage{H: harness.New(ctx, "", harness.DefaultBound), World: wd, Clock: clk}
}

// drive moves the clock, and Redis's, to each next wake-up once everything
// is at rest, until done is closed.
func drive(ctx context.Context, wd *fleet.World, clk *fleet.Clock, done <-chan struct{}) error {
	err := stage(ctx, wd, clk).Drive(func() bool {
		select {
		case <-done:
			return true
		default:
			return false
		}
	}, time.Hour)
	var st *harness.Stuck
	if errors.As(err, &st) && st.Cause == harness.Deadlocked {
		return errors.New("the story's shops wait for something that never comes")
	}
	return err
}

// model is a shop of the story: plain cache-aside reads, and a write path.
type modelShop struct {
	db    *catalog.DB
	rdb   *redis.Client
	write func(s *modelShop, ctx context.Context, price int) error
}

func model(write func(s *modelShop, ctx context.Context, price int) error) NewShop {
	return func(db *catalog.DB, rdb *redis.Client, _ clock.Clock) Shop {
		return &modelShop{db: db, rdb: rdb, write: write}
	}
}

func (s *modelShop) Price(ctx context.Context, b string) (int, error) {
	if v, err := s.rdb.Get(ctx, priceKey).Int(); err == nil {
		return v, nil
	}
	row, err := s.db.Row(ctx, b)
	if err != nil {
		return 0, err
	}
	return row.Price, s.rdb.Set(ctx, priceKey, row.Price, storyTTL).Err()
}

func (s *modelShop) SetPrice(ctx context.Context, _ string, price int) error {
	return s.write(s, ctx, price)
}

// deleteFirst deletes the price, then commits.
func deleteFirst(s *modelShop, ctx context.Context, price int) error {
	if err := s.rdb.Del(ctx, priceKey).Err(); err != nil {
		return err
	}
	_, err := s.db.SetPrice(ctx, book, price)
	return err
}

// setAfter commits, then sets the new price.
func setAfter(s *modelShop, ctx context.Context, price int) error {
	if _, err := s.db.SetPrice(ctx, book, price); err != nil {
		return err
	}
	return s.rdb.Set(ctx, priceKey, price, storyTTL).Err()
}

// deleteAfter commits, then deletes the price.
func deleteAfter(s *modelShop, ctx context.Context, price int) error {
	if _, err := s.db.SetPrice(ctx, book, price); err != nil {
		return err
	}
	return s.rdb.Del(ctx, priceKey).Err()
}
