package compare

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"stampede/shop/catalog"
	"stampede/shop/clock"
	"stampede/shop/events"
)

// PageShop is a shop of the box office (case 8): it serves an event's
// page from the events database, through a cache.
type PageShop interface {
	Page(ctx context.Context, id int) (string, error)
}

// HotEvent is the jitter row's one hot key: an event's page.
const HotEvent = 1

// paged lets compare's ruler read an event's page: the page the database
// holds reads as the old list (the events database has no writes, so no
// page is ever newer), and any other as a list the catalogue never held.
type paged struct{ shop PageShop }

func (p paged) Top(ctx context.Context, _ string) ([]string, error) {
	page, err := p.shop.Page(ctx, HotEvent)
	switch {
	case err != nil:
		return nil, err
	case page == events.PageOf(HotEvent):
		return catalog.Books(catalog.Bestsellers), nil
	}
	return []string{fmt.Sprintf("page %q for event %d", page, HotEvent)}, nil
}

// Jitter is a row for a case-8-shaped shop, New(db, rdb, clk) on the
// events database: a fleet sharing one Redis, each page stored with a time
// to live drawn at random (30 s and up to 5 s more), one rebuild per page
// per server, and no more rebuilds at once than the database has
// connections.
//
// Seed 002's workload is one hot key, and jitter spreads the expiries of
// many keys: on one key, the draw only moves the moment the key expires.
// Compare pins that moment (Pin moves the warm-up's draw to end at the
// expiry), so the row shows what protects the one key when it does
// expire: single-flight in each server, in front of the shared Redis.
// The events database has no writes, so the row has no stale columns.
func Jitter[S PageShop](technique, code string, n int, newShop func(*events.DB, *redis.Client, clock.Clock) S) Row {
	return Row{
		Technique: technique, Code: code, Case: n,
		Open: func(env *Env, _ int) Shop { return paged{newShop(env.Events, env.Redis(), env.Clock)} },
		Pin: func(ctx context.Context, env *Env, left time.Duration) error {
			return env.admin().PExpire(ctx, fmt.Sprintf("event:%d", HotEvent), left).Err()
		},
		NoWrite: "the events database has no writes",
		Seed: Seed{
			None: "its worked example and its table leave TTL jitter out. On one key jitter changes nothing, " +
				"so the row's single-flight in each server gives one load per server; jitter spreads the " +
				"expiries of many keys (case 8)",
		},
	}
}
