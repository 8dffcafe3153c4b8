package case08

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// URLVar names the environment variable that points the case at a real
// Redis or Valkey server, such as redis://localhost:6379/0. Without it the
// case runs on an embedded miniredis. (Case 6 reads the same variable.)
const URLVar = "REDIS_URL"

// serverURL returns the server the checks should use: REDIS_URL, or "" for
// the embedded one.
func serverURL() string { return os.Getenv(URLVar) }

// world is the Redis one scene runs against: a fresh embedded miniredis, on
// which time stands still (its keys age only when told to), or a namespace
// of its own on a real server, where Redis's own clock runs.
//
// It follows case 6's world (checker/case06/world.go): the same in-memory
// connections, so that an idle process settles, and the same namespacing
// of every key on a shared server.
type world struct {
	mr   *miniredis.Miniredis // the embedded server; nil on a real one
	opts *redis.Options       // the real server's options; nil when embedded
	ns   string               // on a real server, the prefix of every key

	admin *redis.Client // the checker's own client; it namespaces by hand

	mu      sync.Mutex
	clients []*redis.Client
}

// openWorld opens a world on the server at url, or on a fresh embedded
// miniredis when url is empty.
func openWorld(ctx context.Context, url string) (*world, error) {
	if url == "" {
		w := &world{mr: miniredis.NewMiniRedis()}
		w.admin = redis.NewClient(w.options())
		return w, nil
	}
	opts, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("case 8: %s is not a Redis URL (redis://HOST:PORT/DB): %w", url, err)
	}
	opts.DialerRetries = 1 // a server that is not there should say so at once
	w := &world{opts: opts, ns: "stampede-lab:" + strings.ToLower(rand.Text()[:12]) + ":"}
	w.admin = redis.NewClient(w.options())
	if err := w.admin.Ping(ctx).Err(); err != nil {
		w.admin.Close()
		return nil, fmt.Errorf("case 8: cannot reach Redis at %s: %w", opts.Addr, err)
	}
	return w, nil
}

// embedded reports whether the world runs on the embedded miniredis.
func (w *world) embedded() bool { return w.mr != nil }

// options returns the options of a new client of this world. The pool is
// wide and patient: a cold start sends hundreds of commands at once, and a
// reader that waits for a connection is the client's business, not the
// shop's.
func (w *world) options() *redis.Options {
	var o redis.Options
	if w.opts != nil {
		o = *w.opts
	} else {
		o.Dialer = func(context.Context, string, string) (net.Conn, error) { return w.mr.Dial() }
	}
	o.PoolSize = 64
	o.PoolTimeout = time.Minute
	// A loaded machine can hold a command up for seconds; the checks'
	// hang bound, not the client's timeouts, decides when code is stuck.
	o.ReadTimeout = time.Minute
	o.WriteTimeout = time.Minute
	o.DisableIdentity = true
	o.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	return &o
}

// client returns a new client for the shop, with t in front of it.
func (w *world) client(t *tap) *redis.Client {
	t.ns = w.ns
	c := redis.NewClient(w.options())
	c.AddHook(t)
	w.mu.Lock()
	w.clients = append(w.clients, c)
	w.mu.Unlock()
	return c
}

// Describe names the server, for the story and the figures.
func (w *world) Describe(ctx context.Context) string {
	if w.embedded() {
		return "embedded miniredis"
	}
	version := "?"
	if info, err := w.admin.Info(ctx, "server").Result(); err == nil {
		for _, line := range strings.Split(info, "\n") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), "redis_version:"); ok {
				version = v
			}
		}
	}
	return fmt.Sprintf("Redis %s at %s, db %d", version, w.opts.Addr, w.opts.DB)
}

// names returns the names of the world's keys, as the shop named them.
func (w *world) names(ctx context.Context) ([]string, error) {
	if w.embedded() {
		return w.mr.Keys(), nil
	}
	var names []string
	iter := w.admin.Scan(ctx, 0, w.ns+"*", 1000).Iterator()
	seen := map[string]bool{}
	for iter.Next(ctx) {
		n := strings.TrimPrefix(iter.Val(), w.ns)
		if !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	if err := iter.Err(); err != nil {
		return nil, fmt.Errorf("case 8: listing keys: %w", err)
	}
	return names, nil
}

// reading is the time to live and the value of every key, read with PTTL
// and GET, and for each key when its reading was sent and answered on the
// checker's clock: the key's expiry lies between sent+ttl and
// answered+ttl.
type reading struct {
	ttl    map[string]time.Duration // -1 for a key with no time to live
	values map[string]string        // the value of each string key
	at     map[string]span          // when each key's PTTL was sent and answered
}

// readChunk is how many keys one pipeline reads on a real server: few
// enough that a pipeline is answered within milliseconds on a loaded
// machine, so that each key's reading is timed closely.
const readChunk = 10

// read reads every key's time to live and value.
func (w *world) read(ctx context.Context) (reading, error) {
	names, err := w.names(ctx)
	if err != nil {
		return reading{}, err
	}
	return w.readNames(ctx, names)
}

// readNames reads the time to live and value of the named keys (the shop's
// names); a key that is gone is left out.
func (w *world) readNames(ctx context.Context, names []string) (reading, error) {
	r := reading{ttl: map[string]time.Duration{}, values: map[string]string{}, at: map[string]span{}}
	if w.embedded() {
		w.readEmbedded(r, names)
		return r, nil
	}
	for len(names) > 0 {
		chunk := names[:min(readChunk, len(names))]
		names = names[len(chunk):]
		ttls := make([]*redis.Cmd, len(chunk))
		gets := make([]*redis.StringCmd, len(chunk))
		sent := time.Now()
		pipe := w.admin.Pipeline()
		for i, n := range chunk {
			ttls[i] = pipe.Do(ctx, "pttl", w.ns+n)
			gets[i] = pipe.Get(ctx, w.ns+n)
		}
		_, _ = pipe.Exec(ctx) // each command's error is read below
		answered := time.Now()
		for i, n := range chunk {
			ms, err := ttls[i].Int64()
			if err != nil {
				return reading{}, fmt.Errorf("case 8: reading the time to live of %s: %w", n, err)
			}
			switch {
			case ms == -2: // gone since the scan
				continue
			case ms < 0:
				r.ttl[n] = -1
			default:
				r.ttl[n] = time.Duration(ms) * time.Millisecond
			}
			r.at[n] = span{sent: sent, answered: answered}
			if v, err := gets[i].Result(); err == nil {
				r.values[n] = v
			} else if !errors.Is(err, redis.Nil) && !strings.Contains(err.Error(), "WRONGTYPE") {
				return reading{}, fmt.Errorf("case 8: reading %s: %w", n, err)
			}
		}
	}
	return r, nil
}

// readEmbedded reads the named keys from the embedded server's own state,
// as PTTL and GET would answer, without a round trip each: the warm-up
// checks read a thousand keys, and two thousand commands through the
// client were most of their work. Time stands still on the embedded
// server, so each key's reading is exact.
func (w *world) readEmbedded(r reading, names []string) {
	now := time.Now()
	for _, n := range names {
		if !w.mr.Exists(n) {
			continue // gone since the listing
		}
		r.ttl[n] = -1
		if ttl := w.mr.TTL(n); ttl > 0 {
			r.ttl[n] = ttl.Truncate(time.Millisecond) // PTTL's unit
		}
		r.at[n] = span{sent: now, answered: now}
		if v, err := w.mr.Get(n); err == nil {
			r.values[n] = v
		}
	}
}

// DeleteAll removes every key of the world: Redis restarted empty.
func (w *world) DeleteAll(ctx context.Context) error {
	names, err := w.names(ctx)
	if err != nil {
		return err
	}
	return w.Delete(ctx, names)
}

// Delete removes the named keys, as their expiry would.
func (w *world) Delete(ctx context.Context, names []string) error {
	for len(names) > 0 {
		n := min(len(names), 500)
		full := make([]string, n)
		for i, name := range names[:n] {
			full[i] = w.ns + name
		}
		if err := w.admin.Del(ctx, full...).Err(); err != nil {
			return fmt.Errorf("case 8: deleting keys: %w", err)
		}
		names = names[n:]
	}
	return nil
}

// Close removes the world's keys from a real server and closes every
// client.
func (w *world) Close() {
	if !w.embedded() {
		_ = w.DeleteAll(context.Background())
	}
	w.mu.Lock()
	clients := w.clients
	w.clients = nil
	w.mu.Unlock()
	for _, c := range clients {
		_ = c.Close()
	}
	_ = w.admin.Close()
	if w.mr != nil {
		w.mr.Close()
	}
}
