package case10

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"stampede/checker/check"
	"stampede/checker/fleet"
	"stampede/checker/harness"
	"stampede/shop/catalog"
)

// The checks of a filler under the faults the chapter is about: a read of
// the row that fails or whose visitor leaves, and writes that keep
// refusing a reader's fills.

// letGoInfo is the check that a filler who will not fill lets its lease go.
var letGoInfo = check.Info{
	ID:   "let-go",
	Name: "a filler whose read fails, or whose visitor leaves in the middle of it, lets its lease go: the next visitor reads at once",
	Catches: "a lease kept after a failed or cancelled read, so that the fleet waits out its time to live while " +
		"nobody reads; a lease deleted on the visitor's own context, which is " +
		"already cancelled when it leaves; and a lease let go only when the database fails",
}

// conflictBudgetInfo is the check that a refused fill does not escape the
// visitor's budget.
var conflictBudgetInfo = check.Info{
	ID:   "conflict-budget",
	Name: "a visitor whose every fill is refused, by writes that commit during each of its reads, returns within a bound",
	Catches: "a refused fill that reads again without looking at the budget, so that writes faster than reads " +
		"keep the visitor reading for as long as they last, and a budget that " +
		"starts again with every try",
}

const (
	// letGoWithin is how long, on the shops' clock, the visitor after a
	// failed fill may take: one healthy read of the row. A lease kept
	// after the failure holds it for the lease's whole time to live.
	letGoWithin = rebuild
	// conflictWithin is the bound on the visitor refused again and again:
	// the longest lease the checker accepts, ten times the reference's
	// budget.
	conflictWithin = maxLease
	// conflicts is how many of the reader's reads a write overtakes in
	// ConflictBudget: at a healthy read's time each, they last 2 s past
	// conflictWithin, so that a reader who reads again without a budget is
	// still reading at the bound.
	conflicts = int(conflictWithin/rebuild) + 10
)

// errDown is the error of a database that is down.
var errDown = errors.New("the database is down")

// LetGo checks that a filler who will not fill lets its lease go. Shop-1's
// visitor misses and takes the lease; in one scene its read of the row
// fails, in the other the read is held and the visitor leaves (its context
// is cancelled). Nobody fills under that lease, so a visitor on shop-2 who
// comes next must get the price within letGoWithin of the shops' clock. It
// catches a lease kept after a failed or cancelled read, a lease deleted on
// the visitor's own cancelled context, and one let go only when the
// database fails.
func LetGo(h *harness.H, newShop NewShop) check.Verdict {
	for _, leaves := range []bool{false, true} {
		if v := letGo(h, newShop, leaves); !v.Pass {
			return v
		}
	}
	return check.Passed("after a failed read, and after a visitor who left in the middle of one, the next visitor read at once")
}

// letGo is one scene of LetGo: the filler's visitor leaves, or its read
// fails.
func letGo(h *harness.H, newShop NewShop, leaves bool) check.Verdict {
	reads := holdCalls(1)
	if !leaves {
		reads = holdCalls()
		reads.then = catalog.RowHook(fleet.NthQuery(fleet.FailWith(errDown), 1))
	}
	s, err := newScene(h, newShop, 2, reads, holdCalls())
	if err != nil {
		return worldVerdict(err)
	}
	defer s.Close()
	what := "its read of the row failed (" + errDown.Error() + ")"
	var r *harness.Crowd[int]
	if leaves {
		var leave context.CancelFunc
		r, leave = s.ReadLeaving(0)
		if err := s.Settle(); err != nil {
			return stuckVerdict(err)
		}
		if s.reads.Calls() == 0 {
			return check.Failed("", "shop-1's visitor, with Redis empty, never read the row: "+strings.Join(s.Places(), "; "))
		}
		leave()
		what = "its visitor left while the row was being read (its context was cancelled)"
	} else {
		r = s.Read(0)
	}
	if err := s.Drive(r.Done, patience); err != nil {
		return waitVerdict(err, "shop-1's visitor, after "+what+", was")
	}
	if o := r.Outcomes()[0]; o.Panic != "" {
		return check.Failed("", "shop-1's visitor's call panicked: "+o.Panic)
	}
	held := s.Cached()
	next := s.Read(1)
	err = s.Drive(next.Done, letGoWithin)
	if errors.Is(err, fleet.ErrNoBound) {
		return check.Failed(fmt.Sprintf("still waiting after %v", letGoWithin), fmt.Sprintf("shop-1's visitor took the "+
			"lease and %s; it returned, and shop-2's visitor who came next was still waiting after %v of the shops' "+
			"clock. Nobody was reading the row: the lease was left to run out its time to live. A filler that will "+
			"not fill must end its own lease (a delete that checks the token, in one script) on every path that gives "+
			"up, on a context of its own with a short deadline: the visitor's is cancelled when it leaves. "+
			"Redis held when shop-1's visitor returned: %s", what, letGoWithin, held))
	}
	if err != nil {
		return stuckVerdict(err)
	}
	switch o := next.Outcomes()[0]; {
	case o.Panic != "":
		return check.Failed("", "shop-2's visitor's call panicked: "+o.Panic)
	case o.Err != nil:
		return check.Failed("", fmt.Sprintf("shop-1's visitor took the lease and %s; shop-2's visitor who came next got "+
			"an error (%v) with nobody reading the row. A filler that will not fill must end its own lease on every "+
			"path that gives up, on a context of its own: the visitor's is cancelled when it leaves. Redis held when "+
			"shop-1's visitor returned: %s", what, o.Err, held))
	case o.Value != oldPrice:
		return check.Failed("", fmt.Sprintf("shop-2's visitor got %s; the price was %s", cents(o.Value), cents(oldPrice)))
	}
	return check.Passed("")
}

// ConflictBudget checks that refused fills do not escape the visitor's
// budget. Every read of the row takes a healthy read's time, and while its
// reply is on its way a write on shop-2 commits and finishes, so that the
// fill is refused; this goes on for conflicts reads (12 s). Shop-1's visitor must
// return, with the price or an error, within conflictWithin of the shops'
// clock. It catches a refused fill that reads again without looking at the
// budget, and a budget that starts again with every try.
func ConflictBudget(h *harness.H, newShop NewShop) check.Verdict {
	reads := holdCalls()
	s, err := newScene(h, newShop, 2, reads, holdCalls())
	if err != nil {
		return worldVerdict(err)
	}
	defer s.Close()
	var overtaken atomic.Int64
	var writeErr atomic.Value
	// Set before any visitor comes, so every read sees it.
	slow := fleet.Slow(s.Clock, rebuild)
	reads.then = func(ctx context.Context, b string) error {
		if err := slow(ctx, b); err != nil {
			return err
		}
		n := overtaken.Add(1)
		if n > int64(conflicts) {
			return nil
		}
		if err := s.shops[1].SetPrice(ctx, book, newPrice+int(n)); err != nil {
			writeErr.CompareAndSwap(nil, err)
		}
		return nil
	}
	began := s.Clock.Now()
	r := s.Read(0)
	err = s.Drive(r.Done, conflictWithin)
	if e, ok := writeErr.Load().(error); ok {
		return check.Failed("", fmt.Sprintf("shop-2's write, during shop-1's read, got an error: %v", e))
	}
	figure := fmt.Sprintf("%s in %v", count(s.RowReads(), "read"), s.Clock.Now().Sub(began).Round(time.Millisecond))
	if errors.Is(err, fleet.ErrNoBound) {
		return check.Failed(figure, fmt.Sprintf("a write committed during each of shop-1's reads of the row, so that each "+
			"fill was refused; shop-1's visitor was still reading after %v of the shops' clock (%s). A budget must hold "+
			"on every path: after a refused fill, look at the deadline before reading again, and past it return an "+
			"error that says to try again. The deadline is set once, when the visitor comes", conflictWithin,
			count(s.RowReads(), "read")))
	}
	if err != nil {
		return stuckVerdict(err)
	}
	if o := r.Outcomes()[0]; o.Panic != "" {
		return check.Failed(figure, "shop-1's visitor's call panicked: "+o.Panic)
	}
	return check.Passed(figure + ", every fill refused by a write")
}
