package catalog

import (
	"context"
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
