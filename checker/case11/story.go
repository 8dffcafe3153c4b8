package case11

import (
	"context"
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"stampede/checker/fleet"
	"stampede/checker/harness"
)

// The story's numbers, as the chapter quotes them: four servers come up
// eight seconds apart, each asked for the book ten times a second, and the
// price changes at 0:40, on shop-1. The story runs until 1:15.
const (
	storyServers = 4
	storyApart   = 8 * time.Second
	storyStep    = 100 * time.Millisecond
	storyWrite   = 40 * time.Second
	storyEnd     = 75 * time.Second
	// storyLook is when, after the write, the story notes which prices
	// the servers tell.
	storyLook = 10 * time.Second
)

// Scenario plays the story: a fleet of servers, each with its copy of the
// price, and a price change at 0:40. It prints, for each server, until
// when it told its visitors the old price, and how often; and what the
// copies spare Redis.
func Scenario(ctx context.Context, w io.Writer, args []string, newShop NewShop, pkg string) error {
	fs := flag.NewFlagSet("run 11", flag.ContinueOnError)
	var sf fleet.StoryFlags
	if err := sf.Parse(ctx, fs, args, w); err != nil {
		return err
	}
	if sf.Seed != 0 {
		return explorer(newShop).Replay(harness.New(ctx, pkg, harness.DefaultBound), w, sf.Seed, sf.Timeline)
	}
	t, err := tell(ctx, sf.URL, newShop)
	if err != nil {
		return err
	}
	t.print(w, sf.URL == "")
	return nil
}

// told is what the story's visitors were told.
type told struct {
	reads      int           // every visitor's read
	stale      []int         // by server: reads told the old price once the write had returned
	after      []int         // by server: reads once the write had returned
	lastStale  []time.Time   // by server: the last read told the old price
	written    time.Time     // when the write returned
	commands   int           // Redis commands the shops sent, but the write's
	errs       []string      // what went wrong, for the reader
	prices     map[int][]int // at storyWrite+storyLook: the servers that told each price
	elapsed    time.Duration // the story's length on its clock
	start      time.Time     // when the story began, on its clock
	subscribed int
}

// tell plays the story on the shops newShop makes.
func tell(ctx context.Context, url string, newShop NewShop) (*told, error) {
	h := harness.New(ctx, "", harness.DefaultBound)
	w, err := fleet.Open(ctx, url)
	if err != nil {
		return nil, err
	}
	s := &scene{Stage: fleet.Stage{H: h, World: w, Clock: fleet.NewExactClock()}, reads: fleet.HoldCalls(), commits: fleet.HoldCalls(),
		book: book, newShop: newShop, channel: newChannel(w)}
	s.listening, s.stop = context.WithCancel(ctx)
	s.db = newDB(s)
	defer s.Close()

	t := &told{stale: make([]int, storyServers), after: make([]int, storyServers),
		lastStale: make([]time.Time, storyServers), prices: map[int][]int{}}
	start := s.Clock.Now()
	var write *harness.Crowd[int]
	for at := time.Duration(0); at <= storyEnd; at += storyStep {
		if wait := start.Add(at).Sub(s.Clock.Now()); wait > 0 {
			if err := s.Elapse(wait); err != nil {
				return nil, err
			}
		}
		for len(s.shops) < storyServers && time.Duration(len(s.shops))*storyApart <= at {
			s.add()
			if err := s.Settle(); err != nil {
				return nil, err
			}
		}
		if at == storyWrite {
			// The write first, to its return: the visitors of this
			// instant come after it, whatever the schedule.
			write = s.Write(0, newPrice)
			if err := s.Drive(write.Done, patience); err != nil {
				return nil, err
			}
			if o := write.Outcomes()[0]; o.Err != nil || o.Panic != "" {
				t.errs = append(t.errs, "the write failed: "+describe(o))
			}
			t.written = s.Clock.Now()
		}
		now := s.Clock.Now()
		shops := s.shops
		r := harness.Visit(h, len(shops), func(ctx context.Context, i int) (int, error) { return shops[i].Price(ctx, book) })
		s.crowds = append(s.crowds, r)
		if err := s.Drive(r.Done, patience); err != nil {
			return nil, err
		}
		for i, o := range r.Outcomes() {
			t.reads++
			if o.Err != nil || o.Panic != "" {
				t.errs = append(t.errs, fmt.Sprintf("shop-%d at %s: %s", i+1, clockText(start, now), describe(o)))
				continue
			}
			if write != nil && !now.Before(t.written) {
				t.after[i]++
				if o.Value == oldPrice {
					t.stale[i]++
					t.lastStale[i] = now
				}
			}
			if at == storyWrite+storyLook {
				t.prices[o.Value] = append(t.prices[o.Value], i)
			}
		}
	}
	t.elapsed = s.Clock.Now().Sub(start)
	t.start = start
	t.subscribed = s.Subscribed()
	for _, tap := range s.taps {
		t.commands += len(tap.Log())
	}
	return t, nil
}

// print tells the story's figures.
func (t *told) print(w io.Writer, embedded bool) {
	fmt.Fprintf(w, "%d shop servers keep a copy of each price they read in their own memory, in front of Redis.\n", storyServers)
	fmt.Fprintf(w, "They come up %.0f s apart; each is asked for %q %.0f times a second.\n",
		storyApart.Seconds(), book, float64(time.Second/storyStep))
	fmt.Fprintf(w, "At %s the price changes from %s to %s on shop-1; the write leaves its tombstone in Redis after the commit.",
		clockText(t.start, t.start.Add(storyWrite)), cents(oldPrice), cents(newPrice))
	if embedded {
		fmt.Fprintf(w, " Redis: embedded miniredis (--redis redis://HOST:PORT/DB, or %s, for a real server).", fleet.URLVar)
	}
	fmt.Fprint(w, "\n\n")
	for _, e := range t.errs[:min(len(t.errs), 5)] {
		fmt.Fprintf(w, "  %s\n", e)
	}
	if t.written.IsZero() {
		fmt.Fprintln(w, "The write never returned.")
		return
	}
	fmt.Fprintf(w, "The write returned at %s. After it:\n", clockText(t.start, t.written))
	fmt.Fprintln(w, "  server   told the old price until   for      reads told the old price")
	total, servers := 0, 0
	for i := range t.stale {
		if t.stale[i] == 0 {
			fmt.Fprintf(w, "  shop-%d   -                          -        0 of %d\n", i+1, t.after[i])
			continue
		}
		servers++
		total += t.stale[i]
		fmt.Fprintf(w, "  shop-%d   %-24s   %-6s   %d of %d\n", i+1, clockText(t.start, t.lastStale[i]),
			fmt.Sprintf("%.1f s", t.lastStale[i].Sub(t.written).Seconds()), t.stale[i], t.after[i])
	}
	after := 0
	for _, n := range t.after {
		after += n
	}
	fmt.Fprintln(w)
	if servers == 0 {
		fmt.Fprintln(w, "No server told a visitor the old price once the write had returned.")
	} else {
		fmt.Fprintf(w, "%d of %d servers told visitors the old price after the write had returned: %d of %d reads.\n",
			servers, storyServers, total, after)
	}
	var told []string
	for _, p := range slices.Sorted(maps.Keys(t.prices)) {
		told = append(told, fmt.Sprintf("%s by %s", cents(p), fleet.Count(len(t.prices[p]), "server")))
	}
	fmt.Fprintf(w, "At %s, %.0f s after the write, visitors were told %s.\n",
		clockText(t.start, t.start.Add(storyWrite+storyLook)), storyLook.Seconds(), strings.Join(told, ", "))
	secs := t.elapsed.Seconds()
	fmt.Fprintf(w, "\nThe hot key: the fleet served %.0f reads a second and sent Redis %.1f commands a second\n",
		float64(t.reads)/secs, float64(t.commands)/secs)
	fmt.Fprintf(w, "(%d commands in %.0f s); with no copies, every read is a GET at least: %.0f a second.\n",
		t.commands, secs, float64(t.reads)/secs)
}

// clockText writes a time of the story as minutes and seconds from its
// start: "0:40.0".
func clockText(start, at time.Time) string {
	d := at.Sub(start)
	return fmt.Sprintf("%d:%04.1f", int(d.Minutes()), (d - d.Truncate(time.Minute)).Seconds())
}
