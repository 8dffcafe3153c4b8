package catalog

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"stampede/shop/clock"
)

// TestWrite: a write changes what later queries of this database answer; a
// query already running answers what it read when it began, and the
// shop's shipped lists and other databases do not change.
func TestWrite(t *testing.T) {
	clk := clock.NewFake(time.Date(2025, 3, 3, 9, 0, 0, 0, time.UTC))
	db := New(WithCost(time.Second), WithClock(clk))
	running := make(chan []string)
	go func() {
		books, _ := db.Top(context.Background(), Bestsellers)
		running <- books
	}()
	require.Eventually(t, func() bool { return clk.Sleepers() == 1 }, 5*time.Second, time.Millisecond)

	written := []string{"The Late Edition"}
	db.Write(Bestsellers, written)
	written[0] = "changed by the caller afterwards"
	clk.Advance(time.Second)
	assert.Equal(t, Books(Bestsellers), <-running, "a query that began before the write")

	fast := New(WithCost(0))
	db2 := New(WithCost(0))
	db2.Write(Bestsellers, []string{"The Late Edition"})
	got, err := db2.Top(context.Background(), Bestsellers)
	require.NoError(t, err)
	assert.Equal(t, []string{"The Late Edition"}, got, "a query after the write, as written")
	got, _ = fast.Top(context.Background(), Bestsellers)
	assert.Equal(t, Books(Bestsellers), got, "another database is unchanged")
	assert.NotEqual(t, "The Late Edition", Books(Bestsellers)[0], "the shipped lists are unchanged")
}
