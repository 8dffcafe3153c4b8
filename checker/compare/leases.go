package compare

import (
	"context"
	"fmt"
	"slices"

	"github.com/redis/go-redis/v9"

	"stampede/checker/fleet"
	"stampede/shop/catalog"
	"stampede/shop/clock"
)

// PriceShop is a shop of the write-path cases (case 10): it serves a book's
// price, and has a write path of its own that commits a new price and then
// does to the cache what the code's writer does.
type PriceShop = fleet.Pricer

// The lease row's hot key is one book's price; the write changes it to
// WrittenPrice.
const (
	HotBook      = "The Night Library"
	WrittenPrice = 1499
)

// priced lets compare's ruler, which tells the list before the write from
// the list after it, read a price: the price before the write reads as the
// old list, the written one as the new list, and any other as a list the
// catalogue never held.
type priced struct {
	shop PriceShop
	old  int
}

func (p priced) Top(ctx context.Context, _ string) ([]string, error) {
	price, err := p.shop.Price(ctx, HotBook)
	switch {
	case err != nil:
		return nil, err
	case price == p.old:
		return catalog.Books(catalog.Bestsellers), nil
	case price == WrittenPrice:
		return slices.Clone(Written), nil
	}
	return []string{fmt.Sprintf("a price of %d cents for %s", price, HotBook)}, nil
}

// Leases is a row for a case-10-shaped shop: New(db, rdb, clk) as in case
// 6, read by Price on one hot book, and written by its own SetPrice, which
// commits the new price and then deletes the key and ends the outstanding
// lease. The warm-up is the default: one fill a time to live (case 10's
// is 30 s, as the workload's) and a rebuild before the expiry.
func Leases[S PriceShop](technique, code string, n int, newShop func(*catalog.DB, *redis.Client, clock.Clock) S) Row {
	// The worked example gives leases no count; its table says they stop
	// both.
	return priceRow(technique, code, n, newShop, Seed{
		Table: &Claim{Stampede: "Yes", StaleSet: "Yes"},
		Why: "the second source read is the write's, not the expiry's: the writer's delete ends the lease " +
			"half way through the rebuild, so the holder's fill, which read the old price, is refused, and " +
			"the first flight to poll after the write, on a server whose readers had been waiting since the " +
			"expiry, takes a new lease and reads the new price",
	})
}

// RateLimitedLeases is a row for a case-10-shaped shop whose leases are
// memcache's: at most one per key every 10 s, and a write that keeps the
// price it deletes, served stale to the readers who cannot have a lease.
func RateLimitedLeases[S PriceShop](technique, code string, n int, newShop func(*catalog.DB, *redis.Client, clock.Clock) S) Row {
	return priceRow(technique, code, n, newShop, Seed{
		None: "its leases row names no rate limit; Nishtala et al. (NSDI 2013) give " +
			"Facebook's memcache one lease per key every 10 s, and serve a deleted value to the clients that accept a stale one",
	})
}

// VersionedCAS is a row for a case-10-shaped shop whose fill stores the
// row's version with the price and is refused by a newer one, and whose
// write leaves a tombstone of the new version (versioned compare-and-set).
func VersionedCAS[S PriceShop](technique, code string, n int, newShop func(*catalog.DB, *redis.Client, clock.Clock) S) Row {
	return priceRow(technique, code, n, newShop, Seed{
		Table: &Claim{Stampede: "No", StaleSet: "Yes"},
		Why: "the versions alone stop only the stale set; the row's code takes a lock in Redis before it " +
			"reads the row, as case 6 does, and that is what stops the stampede",
	})
}

// DoubleDelete is a row for a case-10-shaped shop whose write deletes the
// key before its commit, after it, and once more a guessed delay later
// (the delayed double delete), with nothing against the stampede.
func DoubleDelete[S PriceShop](technique, code string, n int, newShop func(*catalog.DB, *redis.Client, clock.Clock) S) Row {
	return priceRow(technique, code, n, newShop, Seed{
		Table: &Claim{Stampede: "No", StaleSet: "Reduces the window"},
		Why: "the reads that began before the commit store the old price after the write's deletes, and it is " +
			"served until fills that began after the commit overwrite it (the stampede's doing, not the " +
			"delayed delete's, which only empties the key again)",
	})
}

// priceRow is the row of a case-10-shaped shop, held to seed.
func priceRow[S PriceShop](technique, code string, n int, newShop func(*catalog.DB, *redis.Client, clock.Clock) S, seed Seed) Row {
	return Row{
		Technique: technique, Code: code, Case: n,
		Open: func(env *Env, _ int) Shop {
			row, _ := env.DB.Peek(HotBook) // before the write: rows are opened before it
			return priced{shop: newShop(env.DB, env.Redis(), env.Clock), old: row.Price}
		},
		Write: func(ctx context.Context, env *Env) error {
			// The writer is an instance of its own, as an admin request
			// would reach any server.
			return newShop(env.DB, env.admin(), env.Clock).SetPrice(ctx, HotBook, WrittenPrice)
		},
		Seed: seed,
	}
}

// NearCacheShop is a shop of case 11: case 10's read and write paths with
// a copy of each price in the server's memory, and the loop that keeps
// the copy in step, which the server runs as long as it lives.
type NearCacheShop interface {
	PriceShop
	Listen(ctx context.Context) error
}

// nearChannel is the channel the near cache's servers share.
const nearChannel = "prices"

// NearCache is a row for a case-11-shaped shop: New(db, rdb, clk,
// channel), each server running its Listen for the whole row, read by
// Price on the hot book and written by its own SetPrice, which commits,
// leaves its tombstone in Redis and publishes.
func NearCache[S NearCacheShop](technique, code string, n int, newShop func(*catalog.DB, *redis.Client, clock.Clock, string) S) Row {
	return Row{
		Technique: technique, Code: code, Case: n,
		Open: func(env *Env, _ int) Shop {
			row, _ := env.DB.Peek(HotBook) // before the write: rows are opened before it
			shop := newShop(env.DB, env.Redis(), env.Clock, nearChannel)
			env.Go(func(ctx context.Context) { _ = shop.Listen(ctx) })
			return priced{shop: shop, old: row.Price}
		},
		Write: func(ctx context.Context, env *Env) error {
			return newShop(env.DB, env.admin(), env.Clock, nearChannel).SetPrice(ctx, HotBook, WrittenPrice)
		},
		Seed: Seed{None: "the worked example has no near cache; seed 003 names keeping the clients' own copies " +
			"in step as a goal of its own"},
	}
}
