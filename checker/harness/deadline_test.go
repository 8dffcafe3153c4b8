package harness

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

type key struct{}

func TestDeadlineAtEndsWhenTold(t *testing.T) {
	parent, cancel := context.WithCancel(context.WithValue(context.Background(), key{}, "v"))
	ctx, end := DeadlineAt(parent, time.Now())
	cancel()
	assert.NoError(t, ctx.Err(), "the parent's cancel does not reach it")
	assert.Equal(t, "v", ctx.Value(key{}))
	d, ok := ctx.Deadline()
	assert.True(t, ok)
	assert.False(t, d.After(time.Now()), "its deadline is behind it")
	// A context copied from its deadline is over at once.
	copied, stop := context.WithDeadline(context.WithoutCancel(ctx), d)
	defer stop()
	assert.ErrorIs(t, copied.Err(), context.DeadlineExceeded)
	end()
	end()
	<-ctx.Done()
	assert.ErrorIs(t, ctx.Err(), context.DeadlineExceeded)
}
