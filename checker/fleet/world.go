package fleet

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

	"stampede/checker/check"
)

// URLVar names the environment variable that points the Redis cases at a
// real Redis or Valkey server, such as redis://localhost:6379/0. Without it
// they run on an embedded miniredis.
const URLVar = "REDIS_URL"

// World is the Redis one check or one regime of a story runs against: a
// fresh embedded miniredis, whose clock the checker moves by hand, or a
// namespace of its own on a real server, where time is real.
type World struct {
	mr   *miniredis.Miniredis // the embedded server; nil on a real one
	opts *redis.Options       // the real server's options; nil when embedded
	ns   string               // on a real server, the prefix of every Key of this World

	admin *redis.Client // the checker's own client; it namespaces keys by hand

	mu      sync.Mutex
	clients []*redis.Client

	// timeMu orders holdStill and Advance on a real server: shops hold
	// the keys they write side by side, and a move of the clock waits
	// until none is holding.
	timeMu sync.RWMutex
	// stillMu makes each holdStill one step: its look at the server and
	// its note in held. Two side by side could otherwise note out of
	// order, and a hold that found a key gone would forget it after the
	// next write's hold had noted it, leaving it an hour to live.
	stillMu sync.Mutex
	// held is, on a real server, the time to live each key has in the
	// scene: Redis's clock runs while the checker works, and the scene's
	// must not. Such a key carries stillExtra more on the server, so it
	// cannot expire in real time; only Advance ages it.
	held map[string]time.Duration

	// realTime and pool are Open's options (RealTime, Pool).
	realTime bool
	pool     int
}

// An Option changes how Open opens a World.
type Option func(*World)

// RealTime leaves a real server's clock to run: the World holds no key
// still, and a shop's PTTL is the server's. For a scene that times the
// keys it reads itself (case 8 reads a thousand times to live, and bounds
// each by when it was written and read: Tap.Wrote, Reading.At). The
// embedded server's clock moves only by Advance either way.
func RealTime() Option { return func(w *World) { w.realTime = true } }

// Pool gives every client of the World n connections, and a wait for one
// as long as a scene's: a cold start sends hundreds of commands at once,
// and a reader that waits for a connection is the client's business, not
// the shop's.
func Pool(n int) Option { return func(w *World) { w.pool = n } }

// stillExtra is what a held key carries on a real server beyond its time
// to live in the scene: more than any check lasts. A key whose time to
// live on the server is below its held one plus stillExtra/2 was written
// again by a shop since it was held.
const stillExtra = time.Hour

// sceneTTL returns the time to live a key has in the scene, given what
// PTTL said: its held time to live while it still carries stillExtra,
// else what the server said (a shop has just written it, and holdStill
// will hold it).
func (w *World) sceneTTL(name string, observed time.Duration) time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	if ttl, ok := w.held[name]; ok && observed > ttl+stillExtra/2 {
		return ttl
	}
	return observed
}

// hold gives a key on a real server ttl to live in the scene: the server
// is told ttl plus stillExtra.
func (w *World) hold(ctx context.Context, name string, ttl time.Duration) error {
	if err := w.admin.PExpire(ctx, w.ns+name, ttl+stillExtra).Err(); err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.held == nil {
		w.held = map[string]time.Duration{}
	}
	w.held[name] = ttl
	return nil
}

// stillScript adds ARGV[1] ms to the time to live of each key whose time
// to live is below ARGV[2] ms: the keys in KEYS and, when ARGV[3] is not
// empty, every key that matches it. It returns each key's name and its
// time to live as it found it: one round trip, and no moment when Redis's
// clock can run between the look and the change.
var stillScript = redis.NewScript(`
local names = {}
for _, k in ipairs(KEYS) do names[#names + 1] = k end
if ARGV[3] ~= "" then
	local cursor = "0"
	repeat
		local r = redis.call("SCAN", cursor, "MATCH", ARGV[3], "COUNT", 100)
		cursor = r[1]
		for _, k in ipairs(r[2]) do names[#names + 1] = k end
	until cursor == "0"
end
local out = {}
for _, k in ipairs(names) do
	local t = redis.call("PTTL", k)
	if t >= 0 and t < tonumber(ARGV[2]) then
		redis.call("PEXPIRE", k, t + tonumber(ARGV[1]))
	end
	out[#out + 1] = k
	out[#out + 1] = t
end
return out`)

// holdStill holds the keys a shop has just written, on a real server
// (every key of the world when the command's keys are not all known, as
// for a script). It runs after each command of a shop that may write, on
// the shop's own goroutine, one round trip after Redis answered it: a 2 s
// lock on a loaded machine must live 2 s of the scene's time, however
// long the checker takes to settle the fleet. A key written with a time
// to live of stillExtra/2 or more is left to the server's clock: no check
// can see it age.
func (w *World) holdStill(ctx context.Context, names []string, all bool) {
	ctx = context.WithoutCancel(ctx)
	w.timeMu.RLock() // shops write side by side; Advance waits for them
	defer w.timeMu.RUnlock()
	if len(names) == 0 && !all {
		return
	}
	full := make([]string, len(names))
	for i, n := range names {
		full[i] = w.ns + n
	}
	pattern := ""
	if all {
		pattern = w.ns + "*"
	}
	w.stillMu.Lock()
	defer w.stillMu.Unlock()
	found, err := stillScript.Run(ctx, w.admin, full, stillExtra.Milliseconds(), (stillExtra / 2).Milliseconds(), pattern).Slice()
	if err != nil {
		return // the check's own listing will say so
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.held == nil {
		w.held = map[string]time.Duration{}
	}
	for i := 0; i+1 < len(found); i += 2 {
		full, ok1 := found[i].(string)
		ms, ok2 := found[i+1].(int64)
		if !ok1 || !ok2 {
			continue
		}
		name := strings.TrimPrefix(full, w.ns)
		switch ttl := time.Duration(ms) * time.Millisecond; {
		case ms < 0: // gone, or no time to live
			delete(w.held, name)
		case ttl < stillExtra/2: // just written: held now
			w.held[name] = ttl
		}
		// Otherwise it still carries stillExtra (or was written to live
		// that long): unchanged.
	}
}

// Open opens a World on the server at url, or on a fresh embedded
// miniredis when url is empty. It fails at once, with an error that names
// the address, when the server does not answer.
func Open(ctx context.Context, url string, opts ...Option) (*World, error) {
	if url == "" {
		w := &World{mr: miniredis.NewMiniRedis()}
		for _, o := range opts {
			o(w)
		}
		w.admin = redis.NewClient(w.options())
		return w, nil
	}
	ropts, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("%s is not a Redis URL (redis://HOST:PORT/DB): %w", url, err)
	}
	ropts.DialerRetries = 1 // a server that is not there should say so at once
	w := &World{opts: ropts, ns: "stampede-lab:" + strings.ToLower(rand.Text()[:12]) + ":"}
	for _, o := range opts {
		o(w)
	}
	w.admin = redis.NewClient(w.options())
	if err := w.admin.Ping(ctx).Err(); err != nil {
		w.admin.Close()
		return nil, fmt.Errorf("cannot reach Redis at %s: %w", ropts.Addr, err)
	}
	return w, nil
}

// Unusable wraps an error from the Redis a scene needed (the server could
// not be reached, or a command of the checker's own failed), saying so.
func Unusable(err error) error { return fmt.Errorf("the checker could not use Redis: %w", err) }

// Unreachable is the verdict of a check that could not use Redis: a
// failure, and the error says it is the checker's Redis, not the code.
func Unreachable(err error) check.Verdict { return check.Failed("", Unusable(err).Error()) }

// ServerURL returns the server the checks use: $REDIS_URL, or "" for the
// embedded one.
func ServerURL() string { return os.Getenv(URLVar) }

// Embedded reports whether the World runs on the embedded miniredis.
func (w *World) Embedded() bool { return w.mr != nil }

// options returns the options of a new client of this world.
func (w *World) options() *redis.Options {
	var o redis.Options
	if w.opts != nil {
		o = *w.opts
	} else {
		// In-memory connections: no port, and every goroutine of the
		// server waits on a channel when idle, so the process can settle.
		o.Dialer = func(context.Context, string, string) (net.Conn, error) { return w.mr.Dial() }
		// The server is in this process: a reply can be late, when the
		// machine is loaded and the checker's snapshots stop the world,
		// but never lost. go-redis's 3 s read timeout would turn a late
		// reply into an error the shop's code did not make (seen once in
		// 20 runs of case 9 under a load of 36); a hang is the hang
		// bound's to find.
		o.ReadTimeout, o.WriteTimeout = -1, -1
	}
	if w.pool > 0 {
		o.PoolSize, o.PoolTimeout = w.pool, time.Minute
		// A loaded machine can hold a command up for seconds; the
		// checks' hang bound, not the client's timeouts, decides when
		// code is stuck.
		if w.opts != nil {
			o.ReadTimeout, o.WriteTimeout = time.Minute, time.Minute
		}
	}
	o.DisableIdentity = true
	o.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	return &o
}

// Client returns a new client for one shop instance, with t in front of
// it. Close closes it.
func (w *World) Client(t *Tap) *redis.Client {
	t.ns = w.ns
	t.spans = w.realTime
	if !w.Embedded() && !w.realTime {
		t.still = w.holdStill
		t.sceneTTL = w.sceneTTL
	}
	c := redis.NewClient(w.options())
	c.AddHook(t)
	w.mu.Lock()
	w.clients = append(w.clients, c)
	w.mu.Unlock()
	return c
}

// Describe names the server, for the story and the figures.
func (w *World) Describe(ctx context.Context) string {
	if w.Embedded() {
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

// Key is one key of a World and its time to live.
type Key struct {
	Name string
	TTL  time.Duration // the time left; meaningless when Forever
	// Forever is set for a key with no time to live.
	Forever bool
}

func (k Key) String() string {
	if k.Forever {
		return k.Name + " (no time to live)"
	}
	return fmt.Sprintf("%s %v", k.Name, k.TTL.Round(time.Millisecond))
}

// Keys returns the World's keys, sorted by name, as the shops named them,
// with their time to live in the scene.
func (w *World) Keys(ctx context.Context) ([]Key, error) {
	raw, err := w.rawKeys(ctx)
	if err != nil {
		return nil, err
	}
	keys := make([]Key, 0, len(raw))
	for _, k := range raw {
		if !k.Forever && !w.Embedded() {
			k.TTL = w.sceneTTL(k.Name, k.TTL)
		}
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b Key) int { return strings.Compare(a.Name, b.Name) })
	return keys, nil
}

// Strays returns those of names that are keys on a real server outside
// the World's namespace, and deletes them: a shop's script that writes a
// key by a name it was given in ARGV, or built, writes it under that
// name, where the tap's namespace never reaches, and Keys never sees it.
// On the embedded server every key is the World's, and Keys sees them
// all: Strays returns none.
func (w *World) Strays(ctx context.Context, names []string) ([]string, error) {
	if w.Embedded() {
		return nil, nil
	}
	var strays []string
	for _, name := range slices.Compact(slices.Sorted(slices.Values(names))) {
		n, err := w.admin.Exists(ctx, name).Result()
		if err != nil {
			return nil, fmt.Errorf("looking for %s outside the namespace: %w", name, err)
		}
		if n > 0 {
			strays = append(strays, name)
			if err := w.admin.Del(ctx, name).Err(); err != nil {
				return nil, fmt.Errorf("deleting %s outside the namespace: %w", name, err)
			}
		}
	}
	return strays, nil
}

// rawKeys returns the world's keys with the time to live the server
// gives them, by the shops' names.
func (w *World) rawKeys(ctx context.Context) (map[string]Key, error) {
	var names []string
	iter := w.admin.Scan(ctx, 0, w.ns+"*", 100).Iterator()
	for iter.Next(ctx) {
		names = append(names, iter.Val())
	}
	if err := iter.Err(); err != nil {
		return nil, fmt.Errorf("listing keys: %w", err)
	}
	slices.Sort(names)
	names = slices.Compact(names)
	ttls := make([]*redis.Cmd, len(names))
	_, err := w.admin.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, name := range names {
			ttls[i] = p.Do(ctx, "pttl", name)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading the keys' times to live: %w", err)
	}
	keys := map[string]Key{}
	for i, name := range names {
		ms, err := ttls[i].Int64()
		if err != nil {
			return nil, fmt.Errorf("reading the time to live of %s: %w", name, err)
		}
		short := strings.TrimPrefix(name, w.ns)
		switch {
		case ms == -2: // gone since the scan
		case ms < 0:
			keys[short] = Key{Name: short, Forever: true}
		default:
			keys[short] = Key{Name: short, TTL: time.Duration(ms) * time.Millisecond}
		}
	}
	return keys, nil
}

// Get returns a key's string value, and whether it exists.
func (w *World) Get(ctx context.Context, name string) (string, bool, error) {
	v, err := w.admin.Get(ctx, w.ns+name).Result()
	if errors.Is(err, redis.Nil) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("reading %s: %w", name, err)
	}
	return v, true, nil
}

// Set writes a key with a time to live, as another instance would.
func (w *World) Set(ctx context.Context, name, value string, ttl time.Duration) error {
	err := w.admin.Set(ctx, w.ns+name, value, ttl).Err()
	if err == nil && !w.Embedded() {
		w.timeMu.Lock()
		err = w.hold(ctx, name, ttl)
		w.timeMu.Unlock()
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", name, err)
	}
	return nil
}

// Delete removes the named keys, as an eviction under maxmemory (or
// their expiry) would.
func (w *World) Delete(ctx context.Context, names ...string) error {
	for len(names) > 0 {
		n := min(len(names), 500)
		full := make([]string, n)
		for i, name := range names[:n] {
			full[i] = w.ns + name
		}
		if err := w.admin.Del(ctx, full...).Err(); err != nil {
			return fmt.Errorf("deleting %s: %w", strings.Join(names[:min(n, 3)], ", "), err)
		}
		names = names[n:]
	}
	return nil
}

// Evict removes one key, as an eviction or its expiry would, and reports
// whether it was there.
func (w *World) Evict(ctx context.Context, name string) (bool, error) {
	n, err := w.admin.Del(ctx, w.ns+name).Result()
	if err != nil {
		return false, fmt.Errorf("deleting %s: %w", name, err)
	}
	return n > 0, nil
}

// DeleteAll removes every key of the World.
func (w *World) DeleteAll(ctx context.Context) error {
	names, err := w.names(ctx)
	if err != nil {
		return err
	}
	return w.Delete(ctx, names...)
}

// Advance lets d of the shops' clock pass in Redis too, so that keys
// expire in step with the scene: a lock shorter than the rebuild expires
// while the holder is held, as it would in production. On the embedded
// server it moves Redis's clock. On a real one, whose clock runs while the
// checker works, keys are held (see holdStill), and it ages each one's
// held time to live by d, deleting the keys whose time is up: so a key
// lives exactly as long in the scene on a real server as on the embedded
// one, however slow the machine. Keys in keep then get back the time to
// live they had when listed, as a live holder would keep them.
func (w *World) Advance(ctx context.Context, d time.Duration, keep []Key) error {
	kept := func(k Key) bool { return slices.ContainsFunc(keep, func(c Key) bool { return c.Name == k.Name }) }
	if w.Embedded() {
		if d > 0 {
			w.mr.FastForward(d)
		}
		for _, k := range keep {
			if k.Forever {
				continue
			}
			if err := w.admin.PExpire(ctx, w.ns+k.Name, k.TTL).Err(); err != nil {
				return fmt.Errorf("keeping %s alive: %w", k.Name, err)
			}
		}
		return nil
	}
	w.timeMu.Lock()
	defer w.timeMu.Unlock()
	keys, err := w.Keys(ctx)
	if err != nil {
		return err
	}
	for _, k := range keys {
		var err error
		switch {
		case k.Forever:
		case kept(k):
			if i := slices.IndexFunc(keep, func(c Key) bool { return c.Name == k.Name }); !keep[i].Forever {
				err = w.hold(ctx, k.Name, keep[i].TTL)
			}
		case k.TTL <= d:
			err = w.admin.Del(ctx, w.ns+k.Name).Err()
			w.mu.Lock()
			delete(w.held, k.Name)
			w.mu.Unlock()
		default:
			err = w.hold(ctx, k.Name, k.TTL-d)
		}
		if err != nil {
			return fmt.Errorf("letting %v pass for %s: %w", d, k.Name, err)
		}
	}
	return nil
}

// Close removes the World's keys from a real server and closes every
// client it made.
func (w *World) Close() {
	ctx := context.Background()
	if !w.Embedded() {
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

// Values returns the value of every key of the World, by the name the
// shops gave it; a key that is not a string is given by its type, as
// "<hash>".
func (w *World) Values(ctx context.Context) (map[string]string, error) {
	keys, err := w.Keys(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, k := range keys {
		v, ok, err := w.Get(ctx, k.Name)
		if err != nil && strings.Contains(err.Error(), "WRONGTYPE") {
			typ, terr := w.admin.Type(ctx, w.ns+k.Name).Result()
			if terr != nil {
				return nil, fmt.Errorf("reading the type of %s: %w", k.Name, terr)
			}
			v, ok, err = "<"+typ+">", true, nil
		}
		if err != nil {
			return nil, err
		}
		if ok {
			out[k.Name] = v
		}
	}
	return out, nil
}

// Restart empties the embedded server as a restart without persistence
// does: every key and every loaded script are gone (FLUSHALL and SCRIPT
// FLUSH). A shared real server cannot be restarted for one World: SCRIPT
// FLUSH would empty every client's script cache, and any other process
// that loads its scripts again would refill this World's.
func (w *World) Restart(ctx context.Context) error {
	if !w.Embedded() {
		return errors.New("a restart of Redis is staged on the embedded server only")
	}
	if err := w.admin.FlushAll(ctx).Err(); err != nil {
		return fmt.Errorf("restarting Redis (FLUSHALL): %w", err)
	}
	if err := w.admin.ScriptFlush(ctx).Err(); err != nil {
		return fmt.Errorf("restarting Redis (SCRIPT FLUSH): %w", err)
	}
	return nil
}

// TTLs returns the time to live of each key of the World in the scene, by
// the name the shops gave it; a key with none has a negative one.
func (w *World) TTLs(ctx context.Context) (map[string]time.Duration, error) {
	keys, err := w.Keys(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[string]time.Duration, len(keys))
	for _, k := range keys {
		out[k.Name] = k.TTL
		if k.Forever {
			out[k.Name] = -1
		}
	}
	return out, nil
}

// Untimed is a key a shop left without a time to live, and the command
// after which it was seen so.
type Untimed struct {
	Shop int    // the instance, from 0
	Sent string // the command, or the pipeline's commands
	Key  string
}

// String says what u broke, for a message.
func (u Untimed) String() string {
	return fmt.Sprintf("shop-%d sent %q, and right after it %s had no time to live", u.Shop+1, u.Sent, u.Key)
}

// Timeless returns, each as a rule broken, every key the shops left with
// no time to live: those seen so (seen, from WatchTTLs) and, in order,
// those with none now. An explorer asks it as its scene ends. It returns
// nothing when Redis cannot be read: the scene's own checks say so.
func (w *World) Timeless(ctx context.Context, seen func() []Untimed) []string {
	var out []string
	for _, u := range seen() {
		out = append(out, u.String())
	}
	keys, err := w.Keys(ctx)
	if err != nil {
		return out
	}
	for _, k := range keys {
		if k.Forever {
			out = append(out, k.Name+" has no time to live when the scene ends")
		}
	}
	return out
}

// WatchTTLs makes each of taps look at the World after each command (or
// pipeline, or MULTI/EXEC) that may write, and note any key with no time
// to live, with the index of its tap as the instance. It decides from the
// server's state, whatever commands wrote the key: SETNX then EXPIRE,
// RPUSH then EXPIRE, INCR in one script and EXPIRE in another are each
// seen between their two commands, and a MULTI/EXEC or a script that does
// both at once is not. It returns what has been seen so far.
func (w *World) WatchTTLs(taps []*Tap) func() []Untimed {
	var mu sync.Mutex
	var seen []Untimed
	for i, t := range taps {
		t.After(func(ctx context.Context, sent string) {
			keys, err := w.Keys(context.WithoutCancel(ctx))
			if err != nil {
				return
			}
			for _, k := range keys {
				if k.Forever {
					mu.Lock()
					seen = append(seen, Untimed{Shop: i, Sent: sent, Key: k.Name})
					mu.Unlock()
				}
			}
		})
	}
	return func() []Untimed {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(seen)
	}
}

// Span is when a command was sent and when its answer came back, on the
// checker's own (real) clock.
type Span struct{ Sent, Answered time.Time }

// Reading is what Read found of some keys: each one's time to live (-1 for
// none), its value when it is a string, and when its reading was sent and
// answered. On a RealTime World a key's time to live when it was written
// lies between its time to live here plus At[k].Sent minus the write's
// answer (Tap.Wrote) and plus At[k].Answered minus the write's sending.
type Reading struct {
	TTL    map[string]time.Duration
	Values map[string]string
	At     map[string]Span
}

// readChunk is how many keys one pipeline of Read reads on a real server:
// few enough that a pipeline is answered within milliseconds on a loaded
// machine, so that each key's reading is timed closely.
const readChunk = 10

// Read reads the time to live and value of the named keys, as the shops
// named them (every key of the World when names is nil); a key that is
// gone is left out. On the embedded server it reads the server's own
// state, as PTTL and GET would answer, without a round trip each: a scene
// that reads a thousand keys spent most of its time in those round trips.
// On a World that holds time still, a time to live is the key's in the
// scene.
func (w *World) Read(ctx context.Context, names []string) (Reading, error) {
	r := Reading{TTL: map[string]time.Duration{}, Values: map[string]string{}, At: map[string]Span{}}
	if names == nil {
		var err error
		if names, err = w.names(ctx); err != nil {
			return Reading{}, err
		}
	}
	if w.Embedded() {
		now := time.Now()
		for _, n := range names {
			if !w.mr.Exists(n) {
				continue
			}
			r.TTL[n] = -1
			if ttl := w.mr.TTL(n); ttl > 0 {
				r.TTL[n] = ttl.Truncate(time.Millisecond) // PTTL's unit
			}
			r.At[n] = Span{now, now}
			if v, err := w.mr.Get(n); err == nil {
				r.Values[n] = v
			}
		}
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
				return Reading{}, fmt.Errorf("reading the time to live of %s: %w", n, err)
			}
			switch {
			case ms == -2: // gone since the listing
				continue
			case ms < 0:
				r.TTL[n] = -1
			case w.realTime:
				r.TTL[n] = time.Duration(ms) * time.Millisecond
			default:
				r.TTL[n] = w.sceneTTL(n, time.Duration(ms)*time.Millisecond)
			}
			r.At[n] = Span{sent, answered}
			if v, err := gets[i].Result(); err == nil {
				r.Values[n] = v
			} else if !errors.Is(err, redis.Nil) && !strings.Contains(err.Error(), "WRONGTYPE") {
				return Reading{}, fmt.Errorf("reading %s: %w", n, err)
			}
		}
	}
	return r, nil
}

// names returns the names of the World's keys, as the shops named them.
func (w *World) names(ctx context.Context) ([]string, error) {
	if w.Embedded() {
		return w.mr.Keys(), nil
	}
	var names []string
	seen := map[string]bool{}
	iter := w.admin.Scan(ctx, 0, w.ns+"*", 1000).Iterator()
	for iter.Next(ctx) {
		if n := strings.TrimPrefix(iter.Val(), w.ns); !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	if err := iter.Err(); err != nil {
		return nil, fmt.Errorf("listing keys: %w", err)
	}
	return names, nil
}
