package main

import (
	"fmt"
	"io"
	"strings"
	"sync"
)

// progress tells the user what a slow step is doing. On a terminal a step
// is one line redrawn in place (a small bar when the total is known); on
// anything else, such as a CI log or a pipe, each step is a plain line of
// its own, so that a log shows what took the time.
//
// Progress goes to standard error: standard output holds the report, which
// for --json must stay one document.
type progress struct {
	mu    sync.Mutex
	w     io.Writer
	tty   bool
	drawn bool // a redrawable line is on the screen
}

func newProgress(w io.Writer) *progress {
	return &progress{w: w, tty: isTerminal(w)}
}

// Line prints a line that stays.
func (p *progress) Line(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clearLocked()
	fmt.Fprintf(p.w, format+"\n", args...)
}

// Step shows step done of total, with a label. On a terminal it redraws one
// line with a bar; elsewhere it prints "[done/total] label".
func (p *progress) Step(done, total int, label string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.tty {
		fmt.Fprintf(p.w, "[%d/%d] %s\n", done, total, label)
		return
	}
	fmt.Fprintf(p.w, "\r\x1b[K%s %d/%d %s", bar(done, total, 24), done, total, label)
	p.drawn = true
}

// Status shows a line that the next call replaces, on a terminal; elsewhere
// it prints nothing, because a plain log needs only the lines that stay.
func (p *progress) Status(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.tty {
		return
	}
	fmt.Fprintf(p.w, "\r\x1b[K"+format, args...)
	p.drawn = true
}

// Clear removes a redrawn line, if one is showing.
func (p *progress) Clear() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clearLocked()
}

func (p *progress) clearLocked() {
	if p.drawn {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.drawn = false
	}
}

// bar draws done of total as a bar width characters wide: [#####.....].
func bar(done, total, width int) string {
	if total <= 0 {
		total = 1
	}
	done = min(max(done, 0), total)
	full := done * width / total
	return "[" + strings.Repeat("#", full) + strings.Repeat(".", width-full) + "]"
}
