package fleet

import (
	"context"
	"time"

	"stampede/checker/check"
	"stampede/checker/harness"
	"stampede/shop/catalog"
)

// A Pricer is the read and write paths of the cases whose shops price
// books (10 and 11): a book's price, in cents.
type Pricer interface {
	Price(ctx context.Context, book string) (int, error)
	SetPrice(ctx context.Context, book string, price int) error
}

// Describe says what a visitor of a Pricer got, for a message: a price,
// an error or a panic.
func Describe(o harness.Outcome[int]) string {
	switch {
	case o.Panic != "":
		return "a panic: " + o.Panic
	case o.Err != nil:
		return "the error " + o.Err.Error()
	}
	return Cents(o.Value)
}

// PriceTraffic is the race check's traffic for Pricers: two waves of 30
// visitors of three books on instances 0 to 2 (shop(i) is instance i),
// one visitor in five writing, so that the race detector sees every
// access to the instances' state. keep takes each wave's crowd, for the
// scene to let it finish when it closes; patience bounds each wave on the
// shops' clock.
func (s *Stage) PriceTraffic(shop func(i int) Pricer, keep func(*harness.Crowd[int]), patience time.Duration) check.Verdict {
	books := catalog.Priced()[:3]
	for wave := range 2 {
		c := harness.Visit(s.H, 30, func(ctx context.Context, i int) (int, error) {
			p, b := shop(i%3), books[(i/3+wave)%3]
			if i%5 == 4 {
				return 0, p.SetPrice(ctx, b, 1000+i)
			}
			return p.Price(ctx, b)
		})
		keep(c)
		if err := s.Drive(c.Done, patience); err != nil {
			return WaitVerdict(err, "the visitors were", patience)
		}
		if p := c.Panicked(); p != "" {
			return check.Failed("", "a visitor's call panicked: "+p)
		}
	}
	return check.Passed("")
}

// Ask is one visit of an explorer's scene to a Pricer: visitor who (from
// 0) asks instance shop for book's price or, with write, sets it to price,
// and logf tells both ends. It returns the price the visitor got, or the
// one it wrote.
func Ask(ctx context.Context, p Pricer, who, shop int, book string, write bool, price int, logf func(string, ...any)) (int, error) {
	var err error
	if write {
		logf("visitor %d asks shop-%d to set %s to %s", who+1, shop+1, book, Cents(price))
		err = p.SetPrice(ctx, book, price)
	} else {
		logf("visitor %d asks shop-%d for %s", who+1, shop+1, book)
		price, err = p.Price(ctx, book)
	}
	switch {
	case err != nil:
		logf("visitor %d gets the error %q", who+1, err)
	case write:
		logf("visitor %d's write returns", who+1)
	default:
		logf("visitor %d gets %s", who+1, Cents(price))
	}
	return price, err
}
