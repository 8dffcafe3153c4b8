// Package plot draws the chapters' pictures as SVG that GitHub renders:
// axes, lines, dots, bands and labels, written with fmt and nothing else.
// The tests that draw them (checker/case07, checker/case09) take their
// numbers from what the reference solutions do, and Golden holds the
// committed pictures in docs/img to them.
package plot

import (
	"fmt"
	"html"
	"os"
	"strings"
	"testing"
)

// The chart's frame, in pixels: the margins around the plotting area.
const (
	left, right, top, bottom = 64, 24, 40, 48
	font                     = `font-family="Helvetica, Arial, sans-serif"`
)

// Chart is one picture: a plotting area with its scales, and the shapes
// drawn on it so far.
type Chart struct {
	w, h           int
	x0, x1, y0, y1 float64 // the data at the area's edges
	body           strings.Builder
}

// New returns a chart of w by h pixels whose plotting area shows x from x0
// to x1 and y from y0 to y1, titled title.
func New(title string, w, h int, x0, x1, y0, y1 float64) *Chart {
	c := &Chart{w: w, h: h, x0: x0, x1: x1, y0: y0, y1: y1}
	c.printf(`<rect width="%d" height="%d" fill="white"/>`, w, h)
	c.printf(`<text x="%d" y="24" %s font-size="15" font-weight="bold">%s</text>`, left, font, html.EscapeString(title))
	return c
}

func (c *Chart) printf(format string, args ...any) {
	fmt.Fprintf(&c.body, format, args...)
	c.body.WriteByte('\n')
}

// px and py turn data into pixels.
func (c *Chart) px(x float64) float64 {
	return left + (x-c.x0)/(c.x1-c.x0)*float64(c.w-left-right)
}

func (c *Chart) py(y float64) float64 {
	return float64(c.h-bottom) - (y-c.y0)/(c.y1-c.y0)*float64(c.h-top-bottom)
}

// Axes draws the two axes, their ticks with labels made by label, and the
// axes' names.
func (c *Chart) Axes(xname, yname string, xticks, yticks []float64, xlabel, ylabel func(float64) string) {
	x0, x1, y0, y1 := c.px(c.x0), c.px(c.x1), c.py(c.y0), c.py(c.y1)
	c.printf(`<path d="M%.1f %.1f H%.1f M%.1f %.1f V%.1f" stroke="#444" fill="none"/>`, x0, y0, x1, x0, y0, y1)
	for _, x := range xticks {
		c.printf(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#444"/>`, c.px(x), y0, c.px(x), y0+5)
		c.text(c.px(x), y0+18, "middle", "#444", 12, xlabel(x))
	}
	for _, y := range yticks {
		c.printf(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#444"/>`, x0-5, c.py(y), x0, c.py(y))
		c.printf(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#eee"/>`, x0, c.py(y), x1, c.py(y))
		c.text(x0-8, c.py(y)+4, "end", "#444", 12, ylabel(y))
	}
	c.text((x0+x1)/2, float64(c.h)-10, "middle", "#222", 13, xname)
	if yname != "" {
		c.printf(`<text transform="translate(16 %.1f) rotate(-90)" text-anchor="middle" %s font-size="13" fill="#222">%s</text>`,
			(y0+y1)/2, font, html.EscapeString(yname))
	}
}

func (c *Chart) text(x, y float64, anchor, color string, size int, s string) {
	c.printf(`<text x="%.1f" y="%.1f" text-anchor="%s" %s font-size="%d" fill="%s">%s</text>`,
		x, y, anchor, font, size, color, html.EscapeString(s))
}

// Line draws a line through the points, in data coordinates.
func (c *Chart) Line(xs, ys []float64, color string, dashed bool) {
	var d strings.Builder
	for i := range xs {
		cmd := "L"
		if i == 0 {
			cmd = "M"
		}
		fmt.Fprintf(&d, "%s%.1f %.1f ", cmd, c.px(xs[i]), c.py(ys[i]))
	}
	dash := ""
	if dashed {
		dash = ` stroke-dasharray="6 4"`
	}
	c.printf(`<path d="%s" stroke="%s" stroke-width="2" fill="none"%s/>`, strings.TrimSpace(d.String()), color, dash)
}

// Dots draws a small circle at each point.
func (c *Chart) Dots(xs, ys []float64, color string) {
	for i := range xs {
		c.printf(`<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>`, c.px(xs[i]), c.py(ys[i]), color)
	}
}

// Band draws a box from x0 to x1 and y0 to y1 with a label inside.
func (c *Chart) Band(x0, x1, y0, y1 float64, color, label string) {
	c.printf(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s" stroke="#444" stroke-width="0.5"/>`,
		c.px(x0), c.py(y1), c.px(x1)-c.px(x0), c.py(y0)-c.py(y1), color)
	if label != "" {
		c.text((c.px(x0)+c.px(x1))/2, (c.py(y0)+c.py(y1))/2+4, "middle", "#222", 12, label)
	}
}

// Mark draws a vertical line at x across the plotting area, with a label
// beside its top.
func (c *Chart) Mark(x float64, color, label string) {
	c.printf(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-dasharray="3 3"/>`,
		c.px(x), c.py(c.y0), c.px(x), c.py(c.y1), color)
	c.text(c.px(x)+4, c.py(c.y1)+12, "start", color, 11, label)
}

// Label writes s at a point in data coordinates, anchored "start",
// "middle" or "end".
func (c *Chart) Label(x, y float64, anchor, color, s string) {
	c.text(c.px(x), c.py(y), anchor, color, 12, s)
}

// Legend writes one line per entry at the plotting area's top right, each
// with a swatch of its color.
func (c *Chart) Legend(entries ...[2]string) {
	x, y := float64(c.w-right-220), float64(top+14)
	for _, e := range entries {
		c.printf(`<rect x="%.1f" y="%.1f" width="14" height="4" fill="%s"/>`, x, y-5, e[1])
		c.text(x+20, y, "start", "#222", 12, e[0])
		y += 18
	}
}

// SVG returns the picture.
func (c *Chart) SVG() []byte {
	return []byte(fmt.Sprintf("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\">\n%s</svg>\n",
		c.w, c.h, c.w, c.h, c.body.String()))
}

// Golden holds the committed picture at path to got: with update, it
// writes got there; without, it fails the test when they differ, and says
// how to redraw it.
func Golden(t *testing.T, path string, got []byte, update bool) {
	t.Helper()
	if update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v: draw it with go test -run %s -update", err, t.Name())
	}
	if string(want) != string(got) {
		t.Errorf("%s is not what the code draws now: redraw it with go test -run '^%s$' -update, and look at it", path, t.Name())
	}
}
