package catalog

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Each commit leaves one invalidation, in commit order, until a relay marks
// it sent; a rolled-back write leaves none.
func TestOutboxHoldsEachCommitUntilSent(t *testing.T) {
	ctx := context.Background()
	books := Priced()
	rollback := errors.New("rolled back")
	fail := false
	db := New(WithCost(0), WithCommitHook(func(context.Context, string) error {
		if fail {
			return rollback
		}
		return nil
	}))
	first, err := db.SetPrice(ctx, books[0], 100)
	require.NoError(t, err)
	_, err = db.SetPrice(ctx, books[1], 200)
	require.NoError(t, err)
	fail = true
	_, err = db.SetPrice(ctx, books[2], 300)
	require.ErrorIs(t, err, rollback)

	pending, err := db.Pending(ctx)
	require.NoError(t, err)
	assert.Equal(t, []Invalidation{
		{ID: 1, Book: books[0], Version: first.Version},
		{ID: 2, Book: books[1], Version: 2},
	}, pending)

	require.NoError(t, db.MarkSent(ctx, 1))
	require.NoError(t, db.MarkSent(ctx, 1), "marking twice is not an error")
	assert.Equal(t, []Invalidation{{ID: 2, Book: books[1], Version: 2}}, db.Unsent())
	assert.Error(t, db.MarkSent(ctx, 3))
	assert.Equal(t, 1, db.OutboxReads(), "Unsent is not a query")

	done, cancel := context.WithCancel(ctx)
	cancel()
	_, err = db.Pending(done)
	assert.ErrorIs(t, err, context.Canceled)
	assert.ErrorIs(t, db.MarkSent(done, 2), context.Canceled)
}
