package compare

import (
	"fmt"
	"strings"

	"stampede/checker/stack"
)

// parked is idle for a runtime without the scheduler's counts (before Go
// 1.26): one snapshot of every goroutine, in which all but the caller's
// are parked. The signal handler's goroutine, which waits for a signal in
// a system call, counts as parked. It is far slower than the counts.
func parked() bool {
	gs := stack.All()
	for _, g := range gs[min(1, len(gs)):] { // the caller comes first
		if stack.Parked(g.State) || signalLoop(g) {
			continue
		}
		return false
	}
	return true
}

// signalLoop reports whether g is os/signal's goroutine, which waits for a
// signal in the runtime.
func signalLoop(g stack.Goroutine) bool {
	for _, f := range g.Frames {
		if strings.HasPrefix(f.Func, "os/signal.") {
			return true
		}
	}
	return false
}

// where says where the goroutines running code's package wait, such as
// "3 goroutines at cases/case01/shop.go:22 in sync.Mutex.Lock", for a row
// that is stuck: the student's own line, whatever folder the lab is in.
func where(code string) string {
	if code == "" || strings.HasSuffix(code, ".go") {
		return ""
	}
	count := map[string]int{}
	var order []string
	for _, g := range stack.All() {
		for _, f := range g.Frames {
			i := strings.Index(f.File, "/"+code+"/")
			if i < 0 && !strings.HasPrefix(f.File, code+"/") {
				continue
			}
			place := fmt.Sprintf("%s:%d in %s", f.File[i+1:], f.Line, g.State)
			if count[place] == 0 {
				order = append(order, place)
			}
			count[place]++
			break
		}
	}
	var out []string
	for _, p := range order {
		noun := "goroutines"
		if count[p] == 1 {
			noun = "goroutine"
		}
		out = append(out, fmt.Sprintf("%d %s at %s", count[p], noun, p))
	}
	return strings.Join(out, "; ")
}
