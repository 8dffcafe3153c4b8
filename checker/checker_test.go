package checker

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCasesAreNumberedInOrderAndComplete(t *testing.T) {
	for i, c := range Cases() {
		assert.Equal(t, i+1, c.Number)
		assert.NotEmpty(t, c.Title)
		assert.NotEmpty(t, c.Summary)
		assert.NotEmpty(t, c.Checks)
		for _, dir := range []string{"cases", "solutions"} {
			assert.DirExists(t, filepath.Join("..", dir, c.Dir()))
		}
		assert.DirExists(t, filepath.Join("..", Shipped(c)))
		assert.FileExists(t, filepath.Join("..", c.Chapter), "case %d's chapter", c.Number)
		ids := map[string]bool{}
		for _, in := range c.Checks {
			assert.False(t, ids[in.ID], "case %d: check id %q twice", c.Number, in.ID)
			ids[in.ID] = true
		}
	}
}

var mdLink = regexp.MustCompile(`\]\(([^)#\s]+)(#[^)]*)?\)`)

// TestDocLinksResolve keeps README.md and docs/ from pointing at files that
// do not exist.
func TestDocLinksResolve(t *testing.T) {
	docs, err := filepath.Glob(filepath.Join("..", "docs", "*.md"))
	require.NoError(t, err)
	for _, doc := range append(docs, filepath.Join("..", "README.md")) {
		data, err := os.ReadFile(doc)
		require.NoError(t, err)
		for _, m := range mdLink.FindAllStringSubmatch(string(data), -1) {
			target := m[1]
			if strings.Contains(target, "://") {
				continue
			}
			assert.FileExists(t, filepath.Join(filepath.Dir(doc), target), "%s links to %s", doc, target)
		}
	}
}
