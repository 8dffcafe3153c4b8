package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pictures is what each chapter draws, and what holds the drawing to the
// code: a Mermaid diagram of commands on keys that the chapter's own
// output block quotes too (held to `run` by TestChaptersQuoteWhatRunPrints),
// or an SVG that a case's pictures test draws from the case's code.
var pictures = map[string]struct {
	picture string
	keys    []string // the keys a diagram names, spelled as run prints them
}{
	"06-fleet-redis-lock.md": {"```mermaid", []string{"shelf:bestsellers", "lock:shelf:bestsellers"}},
	"07-xfetch.md":           {"](img/xfetch-chance.svg)", nil},
	"09-serve-stale.md":      {"](img/serve-stale.svg)", nil},
	"10-stale-set.md":        {"```mermaid", []string{"price:The Night Library"}},
}

// mermaidBlock is a Mermaid diagram in a chapter.
var mermaidBlock = regexp.MustCompile("(?s)```mermaid\n(.*?)```")

// TestChaptersKeepTheirPictures checks that every picture a chapter
// draws is still there (a rewrite once dropped chapter 10's), that each
// SVG it links exists, and that the keys a diagram sends commands to are
// spelled as the chapter's quoted output spells them.
func TestChaptersKeepTheirPictures(t *testing.T) {
	for doc, want := range pictures {
		data, err := os.ReadFile(filepath.Join("..", "docs", doc))
		require.NoError(t, err)
		text := string(data)
		assert.Contains(t, text, want.picture, "%s has lost its picture", doc)
		if name, ok := strings.CutPrefix(want.picture, "]("); ok {
			_, err := os.Stat(filepath.Join("..", "docs", strings.TrimSuffix(name, ")")))
			assert.NoError(t, err, "%s links a picture that is not there", doc)
		}
		var drawn strings.Builder
		for _, m := range mermaidBlock.FindAllStringSubmatch(text, -1) {
			drawn.WriteString(m[1])
			// In a sequence diagram's text, ';' ends the statement (the
			// diagram is refused) and '#' starts a comment (the rest of
			// the line is dropped, silently).
			for _, line := range strings.Split(m[1], "\n") {
				assert.False(t, strings.ContainsAny(line, ";#"), "%s: Mermaid cannot draw this line: %q", doc, line)
			}
		}
		outside := mermaidBlock.ReplaceAllString(text, "")
		for _, key := range want.keys {
			assert.Contains(t, drawn.String(), key, "%s: its diagram no longer names %q", doc, key)
			assert.Contains(t, outside, key, "%s: its diagram names %q, which its text and output never do", doc, key)
		}
	}
}
