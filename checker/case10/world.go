package case10

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// URLVar names the environment variable that points the case at a real
// Redis or Valkey server, such as redis://localhost:6379/0. Without it the
// case runs on an embedded miniredis.
const URLVar = "REDIS_URL"

// world is the Redis one check or one regime of the story runs against: a
// fresh embedded miniredis, whose clock the checker moves by hand, or a
// namespace of its own on a real server, where time is real.
type world struct {
	mr   *miniredis.Miniredis // the embedded server; nil on a real one
	opts *redis.Options       // the real server's options; nil when embedded
	ns   string               // on a real server, the prefix of every key of this world

	admin *redis.Client // the checker's own client; it namespaces keys by hand

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
		return nil, fmt.Errorf("case 10: %s is not a Redis URL (redis://HOST:PORT/DB): %w", url, err)
	}
	opts.DialerRetries = 1 // a server that is not there should say so at once
	w := &world{opts: opts, ns: "stampede-lab:" + strings.ToLower(rand.Text()[:12]) + ":"}
	w.admin = redis.NewClient(w.options())
	if err := w.admin.Ping(ctx).Err(); err != nil {
		w.admin.Close()
		return nil, fmt.Errorf("case 10: cannot reach Redis at %s: %w", opts.Addr, err)
	}
	return w, nil
}

// serverURL returns the server the checks should use: REDIS_URL, or "" for
// the embedded one.
func serverURL() string { return os.Getenv(URLVar) }

// embedded reports whether the world runs on the embedded miniredis.
func (w *world) embedded() bool { return w.mr != nil }

// options returns the options of a new client of this world.
func (w *world) options() *redis.Options {
	var o redis.Options
	if w.opts != nil {
		o = *w.opts
	} else {
		// In-memory connections: no port, and every goroutine of the
		// server waits on a channel when idle, so the process can settle.
		o.Dialer = func(context.Context, string, string) (net.Conn, error) { return w.mr.Dial() }
		// The server is in this process: a reply can be late on a loaded
		// machine, never lost. go-redis's 3 s read timeout would turn a
		// late reply into an error the shop's code did not make (case 9
		// saw one in 20 runs at a load of 36); a hang is the hang bound's
		// to find.
		o.ReadTimeout, o.WriteTimeout = -1, -1
	}
	o.DisableIdentity = true
	o.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	return &o
}

// client returns a new client for one shop instance, with t in front of it.
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

// key is one key of the world and its time to live.
type key struct {
	name string
	ttl  time.Duration // the time left; meaningless when forever
	// forever is set for a key with no time to live.
	forever bool
}

func (k key) String() string {
	if k.forever {
		return k.name + " (no time to live)"
	}
	return fmt.Sprintf("%s %v", k.name, k.ttl.Round(time.Millisecond))
}

// Keys returns the world's keys, by name, as the shops named them.
func (w *world) Keys(ctx context.Context) ([]key, error) {
	var names []string
	iter := w.admin.Scan(ctx, 0, w.ns+"*", 100).Iterator()
	for iter.Next(ctx) {
		names = append(names, iter.Val())
	}
	if err := iter.Err(); err != nil {
		return nil, fmt.Errorf("case 10: listing keys: %w", err)
	}
	slices.Sort(names)
	names = slices.Compact(names)
	var keys []key
	for _, name := range names {
		ms, err := w.admin.Do(ctx, "pttl", name).Int64()
		if err != nil {
			return nil, fmt.Errorf("case 10: reading the time to live of %s: %w", name, err)
		}
		switch {
		case ms == -2: // gone since the scan
		case ms < 0:
			keys = append(keys, key{name: strings.TrimPrefix(name, w.ns), forever: true})
		default:
			keys = append(keys, key{name: strings.TrimPrefix(name, w.ns), ttl: time.Duration(ms) * time.Millisecond})
		}
	}
	return keys, nil
}

// Get returns a key's string value, and whether it exists.
func (w *world) Get(ctx context.Context, name string) (string, bool, error) {
	v, err := w.admin.Get(ctx, w.ns+name).Result()
	if errors.Is(err, redis.Nil) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("case 10: reading %s: %w", name, err)
	}
	return v, true, nil
}

// Set writes a key with a time to live, as another instance would.
func (w *world) Set(ctx context.Context, name, value string, ttl time.Duration) error {
	if err := w.admin.Set(ctx, w.ns+name, value, ttl).Err(); err != nil {
		return fmt.Errorf("case 10: writing %s: %w", name, err)
	}
	return nil
}

// DeleteAll removes every key of the world.
func (w *world) DeleteAll(ctx context.Context) error {
	keys, err := w.Keys(ctx)
	if err != nil {
		return err
	}
	for _, k := range keys {
		if err := w.admin.Del(ctx, w.ns+k.name).Err(); err != nil {
			return fmt.Errorf("case 10: deleting %s: %w", k.name, err)
		}
	}
	return nil
}

// Restart empties the embedded server as a restart without persistence
// does: every key and every loaded script are gone (FLUSHALL and SCRIPT
// FLUSH). A shared real server cannot be restarted for one world: SCRIPT
// FLUSH would empty every client's script cache, and any other process
// that loads its scripts again would refill this world's.
func (w *world) Restart(ctx context.Context) error {
	if !w.embedded() {
		return errors.New("case 10: a restart is staged on the embedded server only")
	}
	if err := w.admin.FlushAll(ctx).Err(); err != nil {
		return fmt.Errorf("case 10: restarting Redis (FLUSHALL): %w", err)
	}
	if err := w.admin.ScriptFlush(ctx).Err(); err != nil {
		return fmt.Errorf("case 10: restarting Redis (SCRIPT FLUSH): %w", err)
	}
	return nil
}

// Advance lets d of the shops' clock pass in Redis too, so that keys
// expire in step with the scene: a lock shorter than the rebuild expires
// while the holder is held, as it would in production. On the embedded
// server it moves Redis's clock. On a real one it takes d off every key's
// time to live (Redis's own time passes as well, by what the checker's
// work took, a few milliseconds a step). Keys in keep then get back the
// time to live they had when listed, as a live holder would keep them.
func (w *world) Advance(ctx context.Context, d time.Duration, keep []key) error {
	if d > 0 && w.embedded() {
		w.mr.FastForward(d)
	}
	if d > 0 && !w.embedded() {
		keys, err := w.Keys(ctx)
		if err != nil {
			return err
		}
		for _, k := range keys {
			var err error
			switch {
			case k.forever || slices.ContainsFunc(keep, func(c key) bool { return c.name == k.name }):
			case k.ttl <= d:
				err = w.admin.Del(ctx, w.ns+k.name).Err()
			default:
				err = w.admin.PExpire(ctx, w.ns+k.name, k.ttl-d).Err()
			}
			if err != nil {
				return fmt.Errorf("case 10: letting %v pass for %s: %w", d, k.name, err)
			}
		}
	}
	for _, k := range keep {
		if k.forever {
			continue
		}
		if err := w.admin.PExpire(ctx, w.ns+k.name, k.ttl).Err(); err != nil {
			return fmt.Errorf("case 10: keeping %s alive: %w", k.name, err)
		}
	}
	return nil
}

// Refresh gives keys back the time to live they had when listed, on a real
// server, where Redis's time passed while the checker worked. The embedded
// server's time moves only with the scene's clock.
func (w *world) Refresh(ctx context.Context, keys []key) error {
	if w.embedded() {
		return nil
	}
	return w.Advance(ctx, 0, keys)
}

// Close removes the world's keys from a real server and closes every
// client.
func (w *world) Close() {
	ctx := context.Background()
	if !w.embedded() {
		_ = w.DeleteAll(ctx)
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

// rand8 returns eight random characters, for tokens and namespaces.
func rand8() string { return strings.ToLower(rand.Text()[:8]) }
