// Package case11 is case 11 of the lab, the near cache: its story for
// `shop run 11` and its checks for `shop check 11`.
//
// The shops play on the Redis world every Redis case shares (package
// fleet), each instance with its Listen running. The database is the
// catalog's price table, with gates on its row reads and before its
// commits; each instance's tap can hold a command before it is sent, or
// its shop once Redis has answered it, and can cut its subscription. With
// those, each check forces one interleaving of a write, its message and a
// fill, and then asks the instances what the price is.
package case11

import (
	"context"
	"io"

	"github.com/redis/go-redis/v9"

	"stampede/checker/check"
	"stampede/checker/fleet"
	"stampede/checker/harness"
	"stampede/shop/catalog"
	"stampede/shop/clock"
)

// checks are the case's checks, each written once, in the order the report
// prints them: what it checks and catches, and the function that decides it.
var checks = []harness.Check[NewShop]{
	{Info: check.Info{ID: "invalidate", Name: "once a write has returned and its message has arrived, no instance serves the old price",
		Catches: "copies with a time to live and nothing else, a write that publishes nothing, a message the instances do not act on, and one they cannot read when the book's name holds its separator (a colon)"}, Run: Invalidate},
	{Info: check.Info{ID: "write-steps", Name: "a visitor in the middle of a write, before its commit or between its steps after it, leaves no old copy",
		Catches: "a message, or a drop of the copies, sent before the commit or before the tombstone, with the next fill stored regardless"}, Run: WriteSteps},
	{Info: check.Info{ID: "crossing", Name: "a fill that read the old price before a write's message neither stores it nor serves it to a visitor after",
		Catches: "a fill stored whatever message came while it ran: copies with no version or generation; a message handled in two critical sections, a fill landing between (drop-then-floor); a message that leaves the fetch under way to the visitors after it; and a floor forgotten once a copy is stored at it"}, Run: Crossing},
	{Info: check.Info{ID: "late-message", Name: "a write's message or reply that arrives after a newer write's does not bring the older price back",
		Catches: "a floor set to each message's version rather than raised to the highest, a message that carries its price into the copies, and a write that stores its own price in its copy without the floor's say"}, Run: LateMessage},
	{Info: check.Info{ID: "reconnect", Name: "an instance whose subscription was cut serves nothing older than its new subscription",
		Catches: "a Listen that reads only messages, a forget that lets a fill begun before it store (one a message already took off the table too: stale-flag-per-flight), and one that lets a visitor after it join that fill (forget-keeps-flights)"}, Run: Reconnect},
	{Info: check.Info{ID: "fetch-faults", Name: "a fetch whose first visitor leaves, or that fails, or that never answers, leaves the next visitor served",
		Catches: "a fetch on its first visitor's context, a failed fetch kept for the visitors after it, and a fetch with no deadline"}, Run: FetchFaults},
	{Info: check.Info{ID: "writer-leaves", Name: "a write whose visitor leaves at its commit still sends its tombstone and its message",
		Catches: "a tombstone or a PUBLISH sent on the writer's own context, which ends when its client hangs up, or on one given its deadline back"}, Run: WriterLeaves},
	{Info: check.Info{ID: "listen-returns", Name: "Listen returns once its context ends",
		Catches: "a loop over the subscription's channel that never looks at its context"}, Run: ListenReturns},
	{Info: check.Info{ID: "local-ttl", Name: "a copy lives at most 10 s from its fill, message or not",
		Catches: "a copy with no time to live, one longer than 10 s, one whose time starts again at each hit, and one served past its time when its fetch fails"}, Run: LocalTTL},
	{Info: check.Info{ID: "local-hits", Name: "a visitor served from the instance's copy sends Redis nothing",
		Catches: "a copy checked against Redis on every hit"}, Run: LocalHits},
	{Info: check.Info{ID: "one-read", Name: "the visitors of one instance who miss one book at once share one read of Redis, and of the row",
		Catches: "a near cache with no flight: each visitor of a miss reads Redis, and on a cold Redis the database; a flight looked for under one lock and started under another; and one dropped when the visitor who started it leaves"}, Run: OneRead},
	{Info: ExploreInfo, Run: Explore},
	{Info: switchesInfo, Run: Switches},
	{Info: check.Info{ID: "race", Name: "no data race", Race: true,
		Catches: "the copies, or the versions the messages announced, read and written without a lock"}, Run: Busy},
}

// Case describes case 11.
var Case = check.Case{
	Number:   11,
	Points:   10, // a second cache in every instance, kept in step by pub/sub
	Redis:    true,
	Timeline: check.SceneEvents,
	Title:    "The near cache",
	Chapter:  "docs/12-near-cache.md",
	Summary:  "Each instance keeps a copy of the prices in memory, and after a write each serves the old one for its own remaining time: publish every write, drop on the message, and refuse a fill that crossed one.",
	Breaks:   "a copy of the price in every server, and after a write four servers tell four stories: pub/sub invalidation",
	Lesson:   "a local copy in front of Redis is a second cache with the same races: a message after each write, a version that refuses the crossing fill, and a forget on every new subscription",
	Checks:   harness.Infos(checks),
	Hints: []string{
		"Count the caches: Redis, and one more in every instance. A write that fixes Redis leaves the others as they were. Who can tell an instance that its copy is old?",
		"Publish on the channel New is given once the write has committed and its tombstone is in Redis, with the book and the row's new version; in Listen, subscribe and drop the copy each message makes old.",
		"A fill that began before the message can finish after it. Keep, per book, the newest version any message announced, and store a fill only if it is not older.",
		"go-redis subscribes again by itself after a lost connection; read ChannelWithSubscriptions, and on every *redis.Subscription (kind \"subscribe\") forget every copy, and every fill under way.",
		"Keep a copy's life short (5 s), counted from its fill, and let the visitors of a miss share one fetch.",
		"Compare with solutions/case11/shop.go.",
	},
}

// Bind binds case 11 to an implementation's constructor.
func Bind[S Shop](newShop func(*catalog.DB, *redis.Client, clock.Clock, string) S) harness.Bound {
	mk := func(db *catalog.DB, rdb *redis.Client, clk clock.Clock, channel string) Shop {
		return newShop(db, rdb, clk, channel)
	}
	return harness.Bound{
		Scenario: func(ctx context.Context, w io.Writer, args []string) error {
			return Scenario(ctx, w, args, mk, harness.PkgOf[S]())
		},
		Checks: harness.Decide(checks, mk),
	}
}

// Busy plays visitors and writes of three books on three instances at
// once, for the race detector.
func Busy(h *harness.H, newShop NewShop) check.Verdict {
	s, err := newScene(h, newShop, 3, fleet.HoldCalls(), fleet.HoldCalls())
	if err != nil {
		return fleet.Unreachable(err)
	}
	defer s.Close()
	return s.PriceTraffic(func(i int) fleet.Pricer { return s.shops[i] },
		func(c *harness.Crowd[int]) { s.crowds = append(s.crowds, c) }, patience)
}
