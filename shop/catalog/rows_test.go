package catalog

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A read held after its row was read carries the row as it was, and a
// write held before its commit changes nothing any read sees.
func TestRowsAreReadWhenTheQueryBeginsAndChangedAtTheCommit(t *testing.T) {
	ctx := context.Background()
	book := Priced()[0]
	readHeld, readGo := make(chan struct{}), make(chan struct{})
	commitHeld, commitGo := make(chan struct{}), make(chan struct{})
	var db *DB
	db = New(WithCost(0),
		WithReadHook(func(context.Context, string) error {
			if db.RowReads(book) == 1 {
				close(readHeld)
				<-readGo
			}
			return nil
		}),
		WithCommitHook(func(context.Context, string) error {
			close(commitHeld)
			<-commitGo
			return nil
		}))
	before, ok := db.Peek(book)
	require.True(t, ok)

	slow := make(chan Row)
	go func() {
		row, err := db.Row(ctx, book)
		assert.NoError(t, err)
		slow <- row
	}()
	<-readHeld
	written := make(chan Row)
	go func() {
		row, err := db.SetPrice(ctx, book, before.Price+100)
		assert.NoError(t, err)
		written <- row
	}()
	<-commitHeld
	during, err := db.Row(ctx, book)
	require.NoError(t, err)
	assert.Equal(t, before, during, "a write held before its commit is invisible")
	close(commitGo)
	after := <-written
	assert.Equal(t, before.Version+1, after.Version)
	assert.Equal(t, before.Price+100, after.Price)
	close(readGo)
	assert.Equal(t, before, <-slow, "a read carries the row as it was when its query began")
	assert.Equal(t, 2, db.RowReads(book))
	assert.Equal(t, 1, db.Writes())
}

func TestUnknownBook(t *testing.T) {
	db := New(WithCost(0))
	_, err := db.Row(context.Background(), "no such book")
	assert.Error(t, err)
	_, err = db.SetPrice(context.Background(), "no such book", 100)
	assert.Error(t, err)
}

func TestWithBookAddsARowToThisDatabaseOnly(t *testing.T) {
	odd := "Tales: Old & New | Vol. 2/3, #1"
	db := New(WithBook(odd, 700))
	row, ok := db.Peek(odd)
	assert.True(t, ok)
	assert.Equal(t, Row{Book: odd, Price: 700, Version: 1}, row)
	_, ok = New().Peek(odd)
	assert.False(t, ok, "another database has no such book")
	assert.NotContains(t, Priced(), odd)
}

func TestTheCommittedHookRunsOnceTheWriteStands(t *testing.T) {
	var db *DB
	var seen Row
	db = New(WithCost(0), WithCommittedHook(func(ctx context.Context, book string) error {
		seen, _ = db.Peek(book)
		return errors.New("the reply was lost")
	}))
	row, err := db.SetPrice(context.Background(), "Winter Orchard", 1600)
	assert.ErrorContains(t, err, "committed, but: the reply was lost")
	assert.Equal(t, Row{Book: "Winter Orchard", Price: 1600, Version: 2}, seen, "the hook sees the commit")
	assert.Equal(t, seen, row)
	// Outside the transaction: a second write does not wait for the hook.
	held, done := make(chan struct{}), make(chan struct{})
	db2 := New(WithCost(0), WithCommittedHook(func(ctx context.Context, book string) error {
		if book == "Salt and Stone" {
			close(held)
			<-done
		}
		return nil
	}))
	go func() { _, _ = db2.SetPrice(context.Background(), "Salt and Stone", 1) }()
	<-held
	_, err = db2.SetPrice(context.Background(), "Winter Orchard", 2)
	assert.NoError(t, err)
	close(done)
}
