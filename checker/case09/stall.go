package case09

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
)

// stall sits in front of one instance's Redis client, behind case 6's tap,
// and can hold the first command from a moment on that may write (a lock
// attempt, a write, a script), before it is sent, until the checker lets it
// go: a slow network, which a right answer meets in production. Reads go
// through, so the instance has looked at Redis and is about to act on what
// it saw.
type stall struct {
	mu    sync.Mutex
	armed *stalled
	all   []*stalled
}

// stalled is one armed hold.
type stalled struct {
	skip    int           // commands to let through first
	every   bool          // count every command, reads too, not only those that may write
	reached chan struct{} // closed when a command is held
	release chan struct{} // closed to send it on
	once    sync.Once
	mu      sync.Mutex
	sent    string // the command held
}

// arm holds the first command from now on that may write.
func (st *stall) arm() *stalled { return st.armAfter(0, false) }

// armAfter holds the command after the next skip ones, counting every
// command (a command or a pipeline), reads too, when every is set, and
// only those that may write otherwise.
func (st *stall) armAfter(skip int, every bool) *stalled {
	h := &stalled{skip: skip, every: every, reached: make(chan struct{}), release: make(chan struct{})}
	st.mu.Lock()
	st.armed = h
	st.all = append(st.all, h)
	st.mu.Unlock()
	return h
}

// releaseAll lets every held command go and disarms the stall.
func (st *stall) releaseAll() {
	st.mu.Lock()
	st.armed = nil
	all := st.all
	st.mu.Unlock()
	for _, h := range all {
		h.Release()
	}
}

// Release lets the held command go, or disarms a hold that caught nothing.
func (h *stalled) Release() { h.once.Do(func() { close(h.release) }) }

// Reached reports whether a command has been held.
func (h *stalled) Reached() bool {
	select {
	case <-h.reached:
		return true
	default:
		return false
	}
}

// Sent says which command was held.
func (h *stalled) Sent() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.sent
}

// wait holds the caller if the stall is armed and cmds are the command it
// waits for.
func (st *stall) wait(cmds ...redis.Cmder) {
	st.mu.Lock()
	h := st.armed
	var sent, all []string
	for _, c := range cmds {
		line := commandLine(c)
		all = append(all, line)
		if name := strings.ToLower(c.Name()); !readOnly[name] {
			sent = append(sent, line)
		}
	}
	if h != nil && h.every {
		sent = all
	}
	if h == nil || len(sent) == 0 {
		st.mu.Unlock()
		return
	}
	if h.skip > 0 {
		h.skip--
		st.mu.Unlock()
		return
	}
	st.armed = nil
	st.mu.Unlock()
	h.mu.Lock()
	h.sent = strings.Join(sent, " | ")
	h.mu.Unlock()
	close(h.reached)
	<-h.release
}

// commandLine is a command as it was sent, without a reply.
func commandLine(c redis.Cmder) string {
	args := make([]string, len(c.Args()))
	for i, a := range c.Args() {
		args[i] = fmt.Sprint(a)
	}
	return strings.Join(args, " ")
}

// readOnly are the commands a stall lets through: they cannot take a lock
// or write a value.
var readOnly = set("get mget exists pttl ttl type strlen getrange hget hgetall hexists hlen hmget hkeys hvals " +
	"hello client ping echo select auth info command time")

func set(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

// DialHook implements redis.Hook.
func (st *stall) DialHook(next redis.DialHook) redis.DialHook { return next }

// ProcessHook implements redis.Hook.
func (st *stall) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		st.wait(cmd)
		return next(ctx, cmd)
	}
}

// ProcessPipelineHook implements redis.Hook.
func (st *stall) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		st.wait(cmds...)
		return next(ctx, cmds)
	}
}
