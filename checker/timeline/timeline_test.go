package timeline

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestDrawShowsWhoQueriedAndWhoWaited(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)
	r := New(t0, 200*time.Millisecond)
	for i := range 3 {
		ctx := r.Arrive(context.Background(), i, t0)
		if i == 0 {
			r.Query(ctx, t0)
		}
		r.Answer(i, t0.Add(200*time.Millisecond))
	}
	r.Query(context.Background(), t0) // a query no visitor is named for

	var out bytes.Buffer
	r.Draw(&out, 20, 12)
	lines := strings.Split(out.String(), "\n")
	assert.Contains(t, lines[1], "database    22222222222222222222", "two queries ran side by side")
	assert.Contains(t, lines[2], "visitor 1   ===================|")
	assert.Contains(t, lines[3], "visitor 2   ...................|")
	assert.Contains(t, out.String(), "3 visitors: 1 ran a query of their own, 2 only waited")
}

func TestDrawSamplesManyVisitors(t *testing.T) {
	t0 := time.Now()
	r := New(t0, time.Second)
	for i := range 50 {
		r.Arrive(context.Background(), i, t0)
		r.Answer(i, t0.Add(time.Second))
	}
	var out bytes.Buffer
	r.Draw(&out, 30, 12)
	assert.Contains(t, out.String(), "visitor 10 ")
	assert.NotContains(t, out.String(), "visitor 11 ")
	assert.Contains(t, out.String(), "visitor 50 ")
	assert.Contains(t, out.String(), "...")
}

// The visitor who queried is the one the picture is about: it is drawn
// wherever it falls in a long crowd (run 1 --timeline once hid visitor 23,
// the only one who queried, among the lanes left out).
func TestDrawKeepsTheVisitorsWhoQueried(t *testing.T) {
	t0 := time.Now()
	r := New(t0, time.Second)
	for i := range 50 {
		ctx := r.Arrive(context.Background(), i, t0)
		if i == 22 {
			r.Query(ctx, t0)
		}
		r.Answer(i, t0.Add(time.Second))
	}
	var out bytes.Buffer
	r.Draw(&out, 30, 12)
	text := out.String()
	assert.Contains(t, text, "visitor 23 ")
	assert.Contains(t, text, "visitor 1 ")
	assert.Contains(t, text, "visitor 50 ")
	assert.Equal(t, 12, strings.Count(text, "visitor "), "12 lanes: %s", text)
	gaps := 0
	for _, l := range strings.Split(text, "\n") {
		if strings.TrimSpace(l) == "..." {
			gaps++
		}
	}
	assert.Equal(t, 2, gaps, "one gap on each side of visitor 23: %s", text)
}

func TestQueriesOneAfterAnotherAreNotCountedAsTwo(t *testing.T) {
	t0 := time.Now()
	r := New(t0, 100*time.Millisecond)
	ctx := r.Arrive(context.Background(), 0, t0)
	for k := range 7 {
		r.Query(ctx, t0.Add(time.Duration(k)*100*time.Millisecond))
	}
	r.Answer(0, t0.Add(700*time.Millisecond))
	var out bytes.Buffer
	r.Draw(&out, 60, 12)
	db := strings.Split(out.String(), "\n")[1]
	assert.NotContains(t, db, "2", "a query that starts as another ends is not two at once: %q", db)
}
