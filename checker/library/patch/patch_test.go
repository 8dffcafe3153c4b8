package patch

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const base = `package shop

var release = ` + "`" + `
-- only the holder deletes the lock
if redis.call("GET", KEYS[1]) == ARGV[1] then
	return redis.call("DEL", KEYS[1])
end
return 0` + "`" + `

func ttl() int { return 2000 }
`

const entry = `The holder releases the lock with a plain DEL.

It may delete another holder's lock.

base: solutions/case06
--- shop.go
+++ shop.go
@@ -3,6 +3,2 @@
 var release = ` + "`" + `
--- only the holder deletes the lock
-if redis.call("GET", KEYS[1]) == ARGV[1] then
-	return redis.call("DEL", KEYS[1])
-end
-return 0` + "`" + `
+return redis.call("DEL", KEYS[1])` + "`" + `
@@ -10 +7 @@
-func ttl() int { return 2000 }
+func ttl() int { return 200 }
--- /dev/null
+++ extra.go
@@ -0,0 +1,2 @@
+package shop
+
--- old.go
+++ /dev/null
@@ -1 +0,0 @@
-package shop
`

func TestApply(t *testing.T) {
	e, err := Parse(entry)
	require.NoError(t, err)
	assert.Equal(t, "The holder releases the lock with a plain DEL.\n\nIt may delete another holder's lock.", e.Mistake)
	assert.Equal(t, "solutions/case06", e.Base)
	got, err := e.Apply(map[string]string{"shop.go": base, "old.go": "package shop\n"})
	require.NoError(t, err)
	assert.Equal(t, map[string]string{
		"shop.go":  "package shop\n\nvar release = `\nreturn redis.call(\"DEL\", KEYS[1])`\n\nfunc ttl() int { return 200 }\n",
		"extra.go": "package shop\n\n",
	}, got)
}

// An entry whose base has moved on does not apply, and says where.
func TestApplyRefusesAMovedBase(t *testing.T) {
	e, err := Parse(entry)
	require.NoError(t, err)
	moved := "package shop\n\n// a new line\nvar release = `\n"
	_, err = e.Apply(map[string]string{"shop.go": moved, "old.go": "package shop\n"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the base has moved on")
	assert.Contains(t, err.Error(), "line 3 of the base")
}

func TestParseRefusesWhatIsNotADiff(t *testing.T) {
	for name, text := range map[string]string{
		"no base":    "a mistake\n--- shop.go\n+++ shop.go\n",
		"no change":  "a mistake\nbase: solutions/case06\n",
		"stray line": "a mistake\nbase: solutions/case06\n--- shop.go\n+++ shop.go\n@@ -1 +1 @@\n-a\n+b\nstray\n",
		"short hunk": "a mistake\nbase: solutions/case06\n--- shop.go\n+++ shop.go\n@@ -1,2 +1,2 @@\n-a\n+b\n--- x.go\n",
	} {
		_, err := Parse(text)
		assert.Error(t, err, name)
	}
}
