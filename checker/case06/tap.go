package case06

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
)

// command is one Redis command as a shop sent it, with its keys as the shop
// named them (without the namespace of a shared server).
type command struct {
	name string   // "set", lower case
	args []string // every argument after the name
	keys []string
	// known is set when the checker knows where the command's keys are.
	known bool
	// noScript is set when Redis did not know the script of an EVALSHA:
	// the command did nothing, and the client sends EVAL next.
	noScript bool
	// reply is what Redis answered, when the answer is a number or a
	// string (empty otherwise, and for a pipeline's commands).
	reply string
}

func (c command) String() string {
	return strings.TrimSpace(c.name + " " + strings.Join(c.args, " "))
}

// attempt reports whether the command may take a lock on one of keys: it
// names one of them and may create it. Reads, deletes and changes of
// expiry cannot, and neither can a script Redis did not run. A script's
// ARGV, and the arguments of a command the checker does not know, may
// name a key too: for those, any argument counts.
func (c command) attempt(keys []string) bool {
	if readers[c.name] || unmakers[c.name] || c.noScript {
		return false
	}
	if c.names(keys) {
		return true
	}
	if scripted[c.name] || !c.known {
		for _, a := range c.args {
			if slices.Contains(keys, a) {
				return true
			}
		}
	}
	return false
}

// conditional reports whether the command may take a lock: a SET with NX,
// a SETNX, or a script.
func (c command) conditional() bool {
	switch {
	case c.name == "setnx", scripted[c.name]:
		return true
	case c.name == "set":
		for _, a := range c.args {
			if strings.EqualFold(a, "nx") {
				return true
			}
		}
	}
	return false
}

// names reports whether the command names any of the keys.
func (c command) names(keys []string) bool {
	for _, k := range c.keys {
		if slices.Contains(keys, k) {
			return true
		}
	}
	return false
}

// Where a command's keys are, for the commands a shop may send. On a shared
// server every key must be found, to be put under the world's namespace.
var (
	readers = set("get mget exists pttl ttl type strlen getrange substr expiretime pexpiretime dump " +
		"hget hgetall hexists hlen hmget hkeys hvals llen lrange lindex smembers sismember scard zrange zscore zcard")
	unmakers = set("del unlink getdel expire pexpire expireat pexpireat persist")
	firstKey = set("get set setnx setex psetex getset getdel getex pttl ttl expire pexpire expireat pexpireat " +
		"persist type strlen incr incrby incrbyfloat decr decrby append getrange setrange substr expiretime " +
		"pexpiretime dump restore hget hset hsetnx hdel hgetall hexists hlen hincrby hmget hmset hkeys hvals " +
		"lpush rpush lpop rpop llen lrange lindex sadd srem smembers sismember scard zadd zrem zrange zscore zcard zincrby")
	everyKey = set("del unlink exists mget touch watch")
	pairKeys = set("mset msetnx")
	scripted = set("eval evalsha eval_ro evalsha_ro fcall fcall_ro")
	// Channels are not keys: go-redis sends SUBSCRIBE on a connection of
	// its own, past the tap, so PUBLISH's channel is left as it is too.
	keyless = set("hello client ping echo script info time auth select quit multi exec discard unwatch command readonly readwrite reset " +
		"publish spublish subscribe unsubscribe psubscribe punsubscribe ssubscribe sunsubscribe pubsub")
	errNoKeys = "the checker cannot tell which arguments of %s are keys, so it cannot keep them apart from other runs on a shared server; use GET, SET, DEL, EVAL and the like"
)

func set(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

// keyIndexes returns the positions of a command's keys among its arguments
// (the name is position 0), and whether the command is known.
func keyIndexes(name string, args []string) ([]int, bool) {
	n := len(args)
	switch {
	case keyless[name]:
		return nil, true
	case firstKey[name]:
		if n > 1 {
			return []int{1}, true
		}
		return nil, true
	case everyKey[name]:
		var idx []int
		for i := 1; i < n; i++ {
			idx = append(idx, i)
		}
		return idx, true
	case pairKeys[name]:
		var idx []int
		for i := 1; i < n; i += 2 {
			idx = append(idx, i)
		}
		return idx, true
	case scripted[name]:
		if n < 3 {
			return nil, true
		}
		count, err := strconv.Atoi(args[2])
		if err != nil || count < 0 || 3+count > n {
			return nil, true // Redis will refuse it
		}
		var idx []int
		for i := 3; i < 3+count; i++ {
			idx = append(idx, i)
		}
		return idx, true
	}
	return nil, false
}

// tap sits in front of one instance's Redis client. It logs the commands
// the instance sends, can hold one of them until the checker lets it go,
// and on a shared server puts every key under the world's namespace, so
// that checks running side by side never see each other's keys.
type tap struct {
	ns string // "" on the embedded server
	// after, when set, is called once each command or pipeline that may
	// write has run, with what was sent (see fleet.watchTTLs).
	after func(ctx context.Context, sent string)
	// still, when set (on a real server), is called before after, to hold
	// the keys just written still in Redis's time (see world.holdStill):
	// names are the keys written, and all says some are not known.
	still func(ctx context.Context, names []string, all bool)

	mu   sync.Mutex
	log  []command
	hold *hold
}

// hold stops the first command that match accepts, before it is sent.
type hold struct {
	match   func(command) bool // called under the tap's lock
	reached chan struct{}      // closed when a command is held
	release chan struct{}      // closed by the checker to send it on
	held    command
	once    sync.Once
}

// Release lets the held command go, or disarms a hold that caught nothing.
func (h *hold) Release() { h.once.Do(func() { close(h.release) }) }

// Reached reports whether a command is being held.
func (h *hold) Reached() bool {
	select {
	case <-h.reached:
		return true
	default:
		return false
	}
}

// Hold arms a hold for the first command from now on that match accepts.
func (t *tap) Hold(match func(command) bool) *hold {
	h := &hold{match: match, reached: make(chan struct{}), release: make(chan struct{})}
	t.mu.Lock()
	t.hold = h
	t.mu.Unlock()
	return h
}

// Log returns the commands sent so far.
func (t *tap) Log() []command {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.log)
}

// DialHook implements redis.Hook.
func (t *tap) DialHook(next redis.DialHook) redis.DialHook { return next }

// ProcessHook implements redis.Hook.
func (t *tap) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		at, restore, err := t.see(cmd)
		if err != nil {
			cmd.SetErr(err)
			return err
		}
		err = next(ctx, cmd)
		restore()
		t.done(at, err)
		t.replied(at, cmd)
		t.written(ctx, cmd)
		return err
	}
}

// written calls after, if set, once cmds have run, unless every one of
// them only reads.
func (t *tap) written(ctx context.Context, cmds ...redis.Cmder) {
	t.mu.Lock()
	after := t.after
	t.mu.Unlock()
	if after == nil && t.still == nil {
		return
	}
	var sent, names []string
	writes, all := false, false
	for _, cmd := range cmds {
		name := strings.ToLower(argString(cmd.Args()[0]))
		write := !readers[name] && !keyless[name]
		writes = writes || write || name == "exec"
		sent = append(sent, shortArgs(cmd.Args()))
		if !write {
			continue
		}
		args := make([]string, len(cmd.Args()))
		for i, a := range cmd.Args() {
			args[i] = argString(a)
		}
		idx, known := keyIndexes(name, args)
		// A script may write keys it was not given.
		all = all || !known || scripted[name]
		for _, i := range idx {
			names = append(names, strings.TrimPrefix(args[i], t.ns))
		}
	}
	if writes && t.still != nil {
		t.still(ctx, names, all)
	}
	if writes && after != nil {
		joined := strings.Join(sent, "; ")
		if t.ns != "" {
			joined = strings.ReplaceAll(joined, t.ns, "")
		}
		after(ctx, joined)
	}
}

// shortArgs is a command as sent, for a message.
func shortArgs(args []any) string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = argString(a)
	}
	return shorten(strings.Join(out, " "))
}

// ProcessPipelineHook implements redis.Hook.
func (t *tap) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, cmd := range cmds {
			_, restore, err := t.see(cmd)
			if err != nil {
				cmd.SetErr(err)
				return err
			}
			defer restore()
		}
		err := next(ctx, cmds)
		t.written(ctx, cmds...)
		return err
	}
}

// see logs a command, holds it if the checker asked, and namespaces its
// keys. It returns the command's place in the log, and a function that
// puts the shop's own key names back.
func (t *tap) see(cmd redis.Cmder) (int, func(), error) {
	raw := cmd.Args()
	args := make([]string, len(raw))
	for i, a := range raw {
		args[i] = argString(a)
	}
	name := strings.ToLower(args[0])
	idx, known := keyIndexes(name, args)
	c := command{name: name, args: args[1:], known: known}
	for _, i := range idx {
		c.keys = append(c.keys, args[i])
	}

	t.mu.Lock()
	at := len(t.log)
	t.log = append(t.log, c)
	h := t.hold
	caught := h != nil && h.match(c)
	if caught {
		t.hold = nil
		h.held = c
	}
	t.mu.Unlock()
	if caught {
		close(h.reached)
		<-h.release
	}

	if t.ns == "" {
		return at, func() {}, nil
	}
	if !known {
		return at, nil, fmt.Errorf(errNoKeys, strings.ToUpper(name))
	}
	saved := slices.Clone(raw)
	for _, i := range idx {
		raw[i] = t.ns + args[i]
	}
	return at, func() { copy(raw, saved) }, nil
}

// done notes how the command at place at in the log ended.
func (t *tap) done(at int, err error) {
	if err == nil || !strings.HasPrefix(err.Error(), "NOSCRIPT") {
		return
	}
	t.mu.Lock()
	t.log[at].noScript = true
	t.mu.Unlock()
}

// replied notes the answer of the command at place at, when it is a
// number or a string: a value the server made, such as a counter's.
func (t *tap) replied(at int, cmd redis.Cmder) {
	var reply string
	switch c := cmd.(type) {
	case *redis.IntCmd:
		reply = strconv.FormatInt(c.Val(), 10)
	case *redis.StringCmd:
		reply = c.Val()
	case *redis.Cmd:
		switch v := c.Val().(type) {
		case string, int64:
			reply = fmt.Sprint(v)
		}
	}
	if reply == "" {
		return
	}
	t.mu.Lock()
	t.log[at].reply = reply
	t.mu.Unlock()
}

func argString(a any) string {
	switch v := a.(type) {
	case string:
		return v
	case []byte:
		return string(v)
	}
	return fmt.Sprint(a)
}

// nth returns a match that accepts the k-th command naming a key (k from 1).
func nth(k int) func(command) bool {
	seen := 0
	return func(c command) bool {
		if len(c.keys) == 0 {
			return false
		}
		seen++
		return seen == k
	}
}

// attemptOn returns a match that accepts the first command that may take a
// lock on one of keys.
func attemptOn(keys []string) func(command) bool {
	return func(c command) bool { return c.attempt(keys) }
}
