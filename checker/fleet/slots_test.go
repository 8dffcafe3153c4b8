package fleet_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"stampede/checker/fleet"
)

// The slots are Redis Cluster's: the values are CLUSTER KEYSLOT's, and the
// hash tag rules are the cluster specification's examples.
func TestSlotIsRedisClusters(t *testing.T) {
	for key, want := range map[string]int{
		"123456789":             0x31C3, // the CRC16 the specification checks against
		"foo":                   12182,
		"bar":                   5061,
		"{user1000}.following":  fleet.Slot("user1000"),
		"{user1000}.followers":  fleet.Slot("user1000"),
		"foo{}{bar}":            fleet.Slot("foo{}{bar}"), // an empty tag: the whole key
		"foo{{bar}}zap":         fleet.Slot("{bar"),
		"foo{bar}{zap}":         fleet.Slot("bar"),
		"price:{The Night Lib}": fleet.Slot("The Night Lib"),
	} {
		assert.Equal(t, want, fleet.Slot(key), key)
	}
	assert.NotEqual(t, fleet.Slot("price:b"), fleet.Slot("lease:price:b"))
}

// A command of two keys in two slots crosses; so does a MULTI whose
// commands name them one each. A plain pipeline does not, nor do keys that
// share a hash tag.
func TestCrossSlot(t *testing.T) {
	_, tap, rdb := stage(t)
	ctx := context.Background()
	_, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.Del(ctx, "price:b")
		p.Del(ctx, "lease:price:b")
		return nil
	})
	require.NoError(t, err)
	require.NoError(t, rdb.Del(ctx, "price:{b}", "lease:{b}").Err())
	_, crossed := fleet.CrossSlot(tap.Log())
	assert.False(t, crossed, "a plain pipeline, and keys of one tag")

	_, err = rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Del(ctx, "price:b")
		p.Del(ctx, "lease:price:b")
		return nil
	})
	require.NoError(t, err)
	x, crossed := fleet.CrossSlot(tap.Log())
	require.True(t, crossed, "a MULTI across two slots")
	assert.Equal(t, []string{"price:b", "lease:price:b"}, x.Keys)
	assert.Contains(t, x.String(), "a MULTI of")

	require.NoError(t, rdb.Eval(ctx, "return 1", []string{"price:c", "lease:price:c"}).Err())
	log := tap.Log()
	x, crossed = fleet.CrossSlot(log[len(log)-1:])
	require.True(t, crossed, "a script of two keys in two slots")
	assert.Equal(t, `"eval <script> 2 price:c lease:price:c" names price:c (slot `+
		strconv.Itoa(fleet.Slot("price:c"))+") and lease:price:c (slot "+strconv.Itoa(fleet.Slot("lease:price:c"))+")", x.String())
}
