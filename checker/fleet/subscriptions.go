package fleet

import (
	"context"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
)

// An instance's subscriptions, as the tap sees them: every connection its
// client opens goes through the tap (DialHook), which notes the ones that
// subscribe. A scene can cut them (Cut), as a network blip or a server
// that drops a slow subscriber would, and can tell when a message reached
// the instance (Received).

// DialHook implements redis.Hook: each connection the instance's client
// opens goes through the tap. While a Cut is in force, a new connection
// waits until the cut's reconnect, or its context, ends.
func (t *Tap) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		t.mu.Lock()
		cut := t.cut
		t.mu.Unlock()
		if cut != nil {
			select {
			case <-cut:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		c, err := next(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		tc := &tapConn{Conn: c, t: t}
		t.mu.Lock()
		t.conns = append(t.conns, tc)
		t.mu.Unlock()
		return tc, nil
	}
}

// Cut closes every connection on which the instance has subscribed, and
// holds every connection it opens from then on until reconnect is called
// (or the scene's Close, through Disarm). A message published meanwhile
// never reaches the instance: Redis's pub/sub delivers to whoever is
// subscribed at that moment, and to nobody later. go-redis's PubSub dials
// again at once and subscribes anew once let through; its
// *redis.Subscription message says so to a reader of
// ChannelWithSubscriptions. Cut reports how many connections it closed.
func (t *Tap) Cut() (closed int, reconnect func()) {
	gate := make(chan struct{})
	t.mu.Lock()
	if t.cut == nil {
		t.cut = gate
	} else {
		gate = t.cut
	}
	var subs []*tapConn
	kept := t.conns[:0]
	for _, c := range t.conns {
		if c.subscribed.Load() {
			subs = append(subs, c)
		} else {
			kept = append(kept, c)
		}
	}
	t.conns = kept
	t.mu.Unlock()
	for _, c := range subs {
		_ = c.Close()
	}
	var once sync.Once
	return len(subs), func() {
		once.Do(func() {
			t.mu.Lock()
			if t.cut == gate {
				t.cut = nil
			}
			t.mu.Unlock()
			close(gate)
		})
	}
}

// Subscriptions returns how many of the instance's open connections have
// subscribed.
func (t *Tap) Subscriptions() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, c := range t.conns {
		if c.subscribed.Load() && !c.closed.Load() {
			n++
		}
	}
	return n
}

// Received returns how many reads that brought data the instance's
// subscribed connections have made: it goes up once a published message
// (or a subscription's confirmation) has reached the instance's client,
// whatever the shop then does with it.
func (t *Tap) Received() int64 { return t.received.Load() }

// reconnectAll lets go any connection a Cut holds; for Disarm.
func (t *Tap) reconnectAll() {
	t.mu.Lock()
	cut := t.cut
	t.cut = nil
	t.mu.Unlock()
	if cut != nil {
		close(cut)
	}
}

// tapConn is one connection of an instance's client.
type tapConn struct {
	net.Conn
	t          *Tap
	subscribed atomic.Bool // it has sent a SUBSCRIBE, PSUBSCRIBE or SSUBSCRIBE
	closed     atomic.Bool
}

func (c *tapConn) Write(b []byte) (int, error) {
	if names := subscribed(b); len(names) > 0 {
		c.subscribed.Store(true)
		c.t.mu.Lock()
		c.t.channels = append(c.t.channels, names...)
		c.t.mu.Unlock()
	}
	return c.Conn.Write(b)
}

func (c *tapConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 && c.subscribed.Load() {
		c.t.received.Add(1)
		c.t.mu.Lock()
		h := c.t.messages
		c.t.messages = nil
		c.t.mu.Unlock()
		if h != nil {
			close(h.reached)
			<-h.release
		}
	}
	return n, err
}

// HoldMessages arms a hold for what next reaches the instance's
// subscriptions (a published message, or a subscription's confirmation):
// the bytes are read off the connection and wait in the tap until
// Release, so that, let go, the instance's client hands the message on at
// once, with nothing left on the network (a scene lines the shop's
// handling of it up with another goroutine's step, under a
// point.Lockstep schedule). Disarm releases it too.
func (t *Tap) HoldMessages() *Hold {
	h := &Hold{match: func(Command) bool { return true }, reached: make(chan struct{}), release: make(chan struct{})}
	t.mu.Lock()
	t.messages, t.last = h, h
	t.mu.Unlock()
	return h
}

func (c *tapConn) Close() error {
	c.closed.Store(true)
	return c.Conn.Close()
}

// subscribed returns the channels (or patterns) a command in b, bytes a
// client writes, subscribes to: in RESP a command is an array of bulk
// strings ("*2\r\n$9\r\nsubscribe\r\n$6\r\nprices\r\n"), so after a
// SUBSCRIBE, PSUBSCRIBE or SSUBSCRIBE come its arguments, every other
// line, up to the array's length.
func subscribed(b []byte) []string {
	lines := strings.Split(string(b), "\r\n")
	var out []string
	for i := 0; i+2 < len(lines); i++ {
		n, err := strconv.Atoi(strings.TrimPrefix(lines[i], "*"))
		if !strings.HasPrefix(lines[i], "*") || err != nil || n < 2 {
			continue
		}
		switch strings.ToLower(lines[i+2]) {
		case "subscribe", "psubscribe", "ssubscribe":
		default:
			continue
		}
		for k := 1; k < n && i+2+2*k < len(lines); k++ {
			out = append(out, lines[i+2+2*k])
		}
	}
	return out
}

// Channels returns the channels (or patterns) the instance has subscribed
// to, in order, once each time it subscribed.
func (t *Tap) Channels() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.channels)
}

// Channel returns the name a scene's shops use for a pub/sub channel: name
// itself on the embedded server, and under the World's namespace on a
// real one, where checks running side by side share the server's
// channels.
func (w *World) Channel(name string) string { return w.ns + name }
