package case06

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	"stampede/checker/check"
	"stampede/checker/fleet"
	"stampede/checker/harness"
	"stampede/checker/shelves"
	"stampede/shop/catalog"
)

// storeRefusedInfo is case 6's check that a list Redis will not store is
// still served.
var storeRefusedInfo = check.Info{
	ID: "store-refused",
	Name: "with nothing in Redis and Redis refusing to store the list, the lock holder's readers still get the list " +
		"the database gave",
	Catches: "a fill that turns a failed write of the list into its readers' error, throwing a good list away " +
		"(wrong/store-error-drops-list, the reference until the lab's issue 25), and one that hands its readers " +
		"the list with the write's error (wrong/store-error-with-list)",
}

// ErrReadOnly is the answer of a Redis that will not store the list: a
// replica, say, that a failover has not yet promoted.
var ErrReadOnly = errors.New("READONLY You can't write against a read only replica. (planned by the checker)")

// StoreRefused checks that a cold fill serves the list it read even when
// Redis refuses to store it. Redis is empty, and every command of shop-1
// that would write the list (one that carries its first title) is answered
// READONLY; the lock and every read go through. Shop-1's three readers
// share its fill and must each get the list. It catches a fill that
// returns the failed write's error, alone or with the list. A shop whose
// writes carry no title the checker can read is not staged: SKIP.
func StoreRefused(h *harness.H, newShop NewShop) check.Verdict {
	f, err := newFleet(h, newShop, 2, holdNone())
	if err != nil {
		return worldVerdict(err)
	}
	defer f.Close()
	title := catalog.Books(catalog.Bestsellers)[0]
	var refused atomic.Int64
	carriesList := func(c fleet.Command) bool {
		if fleet.ReadOnly(c.Name) {
			return false
		}
		for _, a := range c.Args {
			if strings.Contains(a, title) {
				refused.Add(1)
				return true
			}
		}
		return false
	}
	f.Tap(0).Fail(carriesList, ErrReadOnly, -1)
	readers := f.Visit(0, 3)
	if err := f.Drive(readers.Done, patience); err != nil {
		return waitVerdict(err, "shop-1's readers, with nothing in Redis,")
	}
	if refused.Load() == 0 {
		return check.Skipped("not staged: shop-1's readers wrote nothing to Redis that carried the list (an encoding " +
			"the checker cannot read, or no fill at all), so no write of it could be refused")
	}
	if v := shelves.AllGot(readers.Outcomes(), catalog.Books(catalog.Bestsellers)); !v.Pass {
		return check.Failed(v.Figure+" readers got the list", fmt.Sprintf("with nothing in Redis, shop-1's three "+
			"readers shared a fill; the database answered, and Redis refused to store the list (READONLY, as a "+
			"replica does): %s. The list is right: serve it, log that Redis would not keep it, and let the next "+
			"fill store it", v.Message))
	}
	return check.Passed(fmt.Sprintf("3 readers served while Redis refused %d %s", refused.Load(),
		map[bool]string{true: "write", false: "writes"}[refused.Load() == 1]))
}
