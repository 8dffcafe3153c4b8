package fleet

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// Command is one Redis command as a shop sent it, with its keys as the shop
// named them (without the namespace of a shared server).
type Command struct {
	Name string   // "set", lower case
	Args []string // every argument after the name
	Keys []string
	// Known is set when the checker knows where the command's keys are.
	Known bool
	// NoScript is set when Redis did not know the script of an EVALSHA:
	// the command did nothing, and the client sends EVAL next.
	NoScript bool
	// Reply is what Redis answered, when the answer is a number or a
	// string: a value the server made, such as a counter's (empty
	// otherwise, and for a pipeline's commands).
	Reply string
	// Said is what Redis answered, whatever it was, for a timeline: "OK",
	// "(nil)", "error: ..." (empty for a pipeline's commands).
	Said string
	// At is when the command was sent, on the Tap's clock (zero without
	// one).
	At time.Time
	// Tx numbers the transaction (MULTI ... EXEC) the command was sent in,
	// from 1 for each Tap; 0 for a command sent on its own or in a plain
	// pipeline.
	Tx int
}

func (c Command) String() string {
	return strings.TrimSpace(c.Name + " " + strings.Join(c.Args, " "))
}

// Attempt reports whether the command may take a lock on one of keys: it
// names one of them and may create it. Reads, deletes and changes of
// expiry cannot, and neither can a script Redis did not run. A script's
// ARGV, and the arguments of a command the checker does not know, may
// name a key too: for those, any argument counts.
func (c Command) Attempt(keys []string) bool {
	if readers[c.Name] || unmakers[c.Name] || c.NoScript {
		return false
	}
	if c.Names(keys) {
		return true
	}
	if scripted[c.Name] || !c.Known {
		for _, a := range c.Args {
			if slices.Contains(keys, a) {
				return true
			}
		}
	}
	return false
}

// Conditional reports whether the command may take a lock: a SET with NX,
// a SETNX, or a script.
func (c Command) Conditional() bool {
	switch {
	case c.Name == "setnx", scripted[c.Name]:
		return true
	case c.Name == "set":
		for _, a := range c.Args {
			if strings.EqualFold(a, "nx") {
				return true
			}
		}
	}
	return false
}

// Writes reports whether the command names key among its keys and may
// create or change it: not a read, a delete or a change of expiry, and
// not a script Redis did not run. Unlike Attempt, a script's ARGV does not
// count: this is the keys the command declared.
func (c Command) Writes(key string) bool {
	return !readers[c.Name] && !unmakers[c.Name] && !c.NoScript && slices.Contains(c.Keys, key)
}

// Reads reports whether the command only reads keys (GET, MGET, EXISTS,
// PTTL and the like): a look, which a shop may send again at any time.
func (c Command) Reads() bool { return readers[c.Name] }

// Scripted reports whether the command runs a script or a function.
func (c Command) Scripted() bool { return scripted[c.Name] }

// Keyed reports whether the command names a key: one on the shop's data,
// not PING, SUBSCRIBE or PUBLISH.
func (c Command) Keyed() bool { return len(c.Keys) > 0 }

// Names reports whether the command names any of the keys.
func (c Command) Names(keys []string) bool {
	for _, k := range c.Keys {
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
	keyless = set("hello client ping echo script info time auth select quit multi exec discard unwatch Command readonly readwrite reset " +
		"publish spublish subscribe unsubscribe psubscribe punsubscribe ssubscribe sunsubscribe pubsub")
	errNoKeys = "the checker cannot tell which arguments of %s are keys, so it cannot keep them apart from other runs on a shared server; use GET, SET, DEL, EVAL and the like"
)

// ReadOnly reports whether the command (its name, lower case) only reads:
// it cannot create, change or remove a key.
func ReadOnly(name string) bool { return readers[name] }

// ErrNoKeys is the error a command gets on a shared server when the
// checker cannot tell which of its arguments are keys.
func ErrNoKeys(name string) error { return fmt.Errorf(errNoKeys, strings.ToUpper(name)) }

func set(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

// KeyIndexes returns the positions of a command's keys among its arguments
// (the name, lower case, is position 0), and whether the command is one
// the checker knows: on a shared server a command whose keys it cannot
// find is refused (see ErrNoKeys).
func KeyIndexes(name string, args []string) ([]int, bool) {
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

// Tap sits in front of one instance's Redis client. It logs the commands
// the instance sends, can hold one of them until the checker lets it go,
// and on a shared server puts every key under the World's namespace, so
// that checks running side by side never see each other's keys. Make one
// with NewTap and give it to World.Client.
type Tap struct {
	ns  string           // "" on the embedded server
	now func() time.Time // the scene's clock, for each command's At; nil for none
	// still, when set (on a real server), is called after each command
	// that may write, to hold the keys just written still in Redis's time
	// (see World.holdStill): names are the keys written, and all says
	// some are not known.
	still func(ctx context.Context, names []string, all bool)
	// sceneTTL, when set (on a real server), turns a time to live Redis
	// reported for a key into the key's time to live in the scene (see
	// World.sceneTTL), for the shop's own PTTL and TTL.
	sceneTTL func(name string, observed time.Duration) time.Duration

	mu sync.Mutex
	// after, when set, is called once each command or pipeline that may
	// write has run, with what was sent (see After).
	after func(ctx context.Context, sent string)
	// note, when set, is called with each command once Redis has answered
	// it (see Note).
	note func(Command)
	log  []Command
	txs  int   // transactions sent so far, to number each Command's Tx
	hold *Hold // armed, and not yet caught a command
	// reply is armed by HoldReply, and not yet caught an answer; messages
	// by HoldMessages, and not yet caught what reached a subscription.
	reply, messages *Hold
	last            *Hold // armed last, caught or not: what Disarm releases
	// paused, while Pause is in force, is closed by its resume: every
	// command waits on it before it is sent.
	paused chan struct{}
	stall  *Stall // Stall's, while armed
	// faults are armed by Fail and CancelAfter, in the order armed.
	faults []*fault
	// stage, when set, sees each single command before it is sent and
	// once it is answered (see Stage).
	stage func(ctx context.Context, cmd redis.Cmder, answered bool)
	// wrote holds, for each key a command may have written, when its last
	// such command was sent and answered (see Wrote); kept only on a
	// RealTime World (spans), whose scenes time their keys themselves.
	wrote map[string]Span
	spans bool

	// inFlight counts the commands and pipelines sent and not yet
	// answered, answered those answered (see InFlight).
	inFlight, answered atomic.Int64

	// conns are the connections the client has opened (subscriptions.go);
	// cut, while a Cut is in force, is closed by its reconnect: a new
	// connection waits on it. received counts the subscribed connections'
	// reads that brought data (Received).
	conns    []*tapConn
	cut      chan struct{}
	received atomic.Int64
	channels []string // what the instance subscribed to (Channels)
}

// Stage has fn called twice for each single command (not one of a
// pipeline or a transaction): before it is sent, with the shop's own key
// names, and once Redis has answered it, its error set (answered). fn
// runs on the shop's goroutine: a scene holds a command there on the
// scene's clock, as a slow network would, or learns a key's name from the
// write that carries a value. Set it before the shop is made.
func (t *Tap) Stage(fn func(ctx context.Context, cmd redis.Cmder, answered bool)) { t.stage = fn }

// InFlight returns how many commands (or pipelines) of the instance have
// been sent and not yet answered, and how many have been answered. On a
// real server a goroutine waiting for an answer looks parked to a
// snapshot: a scene that settles waits until none is in flight, and
// takes answers as progress.
func (t *Tap) InFlight() (sent, answered int64) { return t.inFlight.Load(), t.answered.Load() }

// Wrote returns, for each key a command of the instance may have written
// (by its shop's name), when the last such command was sent and answered.
// Only a client of a RealTime World keeps them.
func (t *Tap) Wrote() map[string]Span {
	t.mu.Lock()
	defer t.mu.Unlock()
	return maps.Clone(t.wrote)
}

// noteWrites records that cmds, sent at sent, have been answered now.
func (t *Tap) noteWrites(sent time.Time, cmds ...redis.Cmder) {
	if !t.spans {
		return
	}
	var keys []string
	for _, cmd := range cmds {
		args := make([]string, len(cmd.Args()))
		for i, a := range cmd.Args() {
			args[i] = strings.TrimPrefix(ArgString(a), t.ns)
		}
		name := strings.ToLower(args[0])
		if readers[name] {
			continue
		}
		idx, _ := KeyIndexes(name, args)
		for _, i := range idx {
			keys = append(keys, args[i])
		}
	}
	if len(keys) == 0 {
		return
	}
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.wrote == nil {
		t.wrote = map[string]Span{}
	}
	for _, k := range keys {
		t.wrote[k] = Span{sent, now}
	}
}

// NewTap returns a Tap that stamps each command with now's time (nil for
// none).
func NewTap(now func() time.Time) *Tap { return &Tap{now: now} }

// After has fn called once each command, pipeline or MULTI/EXEC that may
// write has run, on the shop's own goroutine, with what was sent, as one
// line with the shops' own key names. Redis cannot run anything of that
// instance's in between, so fn sees the state the command left.
func (t *Tap) After(fn func(ctx context.Context, sent string)) {
	t.mu.Lock()
	t.after = fn
	t.mu.Unlock()
}

// Note has fn called with each command once Redis has answered it, for a
// story's timeline.
func (t *Tap) Note(fn func(Command)) {
	t.mu.Lock()
	t.note = fn
	t.mu.Unlock()
}

// Hold stops the first command that its match accepts, before it is sent.
type Hold struct {
	match   func(Command) bool // called under the Tap's lock
	reached chan struct{}      // closed when a command is held
	release chan struct{}      // closed by the checker to send it on
	held    Command
	once    sync.Once
	// untilDone lets the held command fail with its context's error once
	// the context ends (see HoldUntilDone).
	untilDone bool
	// sent has Redis run the held command, once let go, whatever became
	// of its context meanwhile (see HoldSent).
	sent bool
}

// Release lets the held command go, or disarms a hold that caught nothing.
func (h *Hold) Release() { h.once.Do(func() { close(h.release) }) }

// done is ctx's Done channel for a hold that honours it, and nil (never
// ready) for one that does not.
func (h *Hold) done(ctx context.Context) <-chan struct{} {
	if h.untilDone {
		return ctx.Done()
	}
	return nil
}

// Held returns the command held, once Reached ("" before).
func (h *Hold) Held() string {
	if !h.Reached() {
		return ""
	}
	return h.held.String()
}

// Reached reports whether a command is being held.
func (h *Hold) Reached() bool {
	select {
	case <-h.reached:
		return true
	default:
		return false
	}
}

// Hold arms a hold for the first command from now on that match accepts,
// in place of any hold armed before.
func (t *Tap) Hold(match func(Command) bool) *Hold { return t.arm(match, false) }

// arm arms a hold; see Hold and HoldUntilDone.
func (t *Tap) arm(match func(Command) bool, untilDone bool) *Hold {
	h := &Hold{match: match, reached: make(chan struct{}), release: make(chan struct{}), untilDone: untilDone}
	t.mu.Lock()
	t.hold, t.last = h, h
	t.mu.Unlock()
	return h
}

// HoldSent is Hold for a command already on its way: the client has
// written it and waits for the answer, and Redis runs it only when let go,
// whether or not the sender's context has ended meanwhile, as Redis runs
// a command that reached its connection late, whoever still waits. (A
// cancelled context does not stop go-redis reading the answer of a
// command it has written.) It stages a command slow on the network, such
// as a keepalive's renewal that lands after its filler has let the lease
// go.
func (t *Tap) HoldSent(match func(Command) bool) *Hold {
	h := t.arm(match, false)
	h.sent = true
	return h
}

// HoldReply arms a hold for the answer to the first single command (not
// one of a pipeline or a transaction) from now on that match accepts:
// Redis runs the command, and its answer waits on its way back to the
// shop until Release. Let go, the shop goes on at once, with no round
// trip left to wait for: a scene lines the shop's next step up with
// another goroutine's (Release under a point.Lockstep schedule).
func (t *Tap) HoldReply(match func(Command) bool) *Hold { return t.armReply(match, false) }

// HoldReplyUntilDone is HoldReply for a shop whose call may end first:
// the held answer goes on to the shop as soon as the command's context
// ends, as an answer that had arrived would.
func (t *Tap) HoldReplyUntilDone(match func(Command) bool) *Hold { return t.armReply(match, true) }

// armReply arms a hold of an answer; see HoldReply.
func (t *Tap) armReply(match func(Command) bool, untilDone bool) *Hold {
	h := &Hold{match: match, reached: make(chan struct{}), release: make(chan struct{}), untilDone: untilDone}
	t.mu.Lock()
	t.reply, t.last = h, h
	t.mu.Unlock()
	return h
}

// holdReply holds the answer to the command at place at in the log, if
// a HoldReply is armed for it.
func (t *Tap) holdReply(ctx context.Context, at int) {
	t.mu.Lock()
	h := t.reply
	caught := h != nil && h.match(t.log[at])
	if caught {
		t.reply = nil
		h.held = t.log[at]
	}
	t.mu.Unlock()
	if caught {
		close(h.reached)
		select {
		case <-h.release:
		case <-h.done(ctx):
		}
	}
}

// HoldUntilDone is Hold for a client that honours its contexts' deadlines
// (go-redis with ContextTimeoutEnabled): the held command fails with its
// context's error as soon as the context ends, and is never sent; until
// then, or until Release, it is held as Hold holds it.
func (t *Tap) HoldUntilDone(match func(Command) bool) *Hold { return t.arm(match, true) }

// Disarm releases the hold armed last, if any: the command it holds goes
// on, and one it has not caught yet is not held. It ends a Cut too: the
// connections it holds are let through.
func (t *Tap) Disarm() {
	t.mu.Lock()
	h := t.last
	t.hold, t.reply, t.messages, t.last = nil, nil, nil, nil
	t.mu.Unlock()
	if h != nil {
		h.Release()
	}
	t.reconnectAll()
}

// Log returns the commands sent so far.
func (t *Tap) Log() []Command {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.log)
}

// ProcessHook implements redis.Hook.
func (t *Tap) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if t.stage != nil {
			t.stage(ctx, cmd, false)
		}
		at, restore, onItsWay, err := t.see(ctx, cmd)
		if err != nil {
			cmd.SetErr(err)
			return err
		}
		sendCtx := ctx
		if onItsWay {
			sendCtx = context.WithoutCancel(ctx)
		}
		t.inFlight.Add(1)
		sent := time.Now()
		err = next(sendCtx, cmd)
		t.noteWrites(sent, cmd)
		restore()
		t.answered.Add(1)
		t.inFlight.Add(-1)
		t.inScene(cmd)
		t.done(at, cmd, err)
		t.holdReply(ctx, at)
		if err != nil {
			// go-redis sets a command's error once the hooks return;
			// the stage and the notes read it from the command.
			cmd.SetErr(err)
		}
		t.staged(ctx, cmd)
		t.written(ctx, cmd)
		t.cancelAfter(ctx, at)
		return err
	}
}

// staged shows an answered command to the stage, if one is set.
func (t *Tap) staged(ctx context.Context, cmd redis.Cmder) {
	if t.stage != nil {
		t.stage(ctx, cmd, true)
	}
}

// inScene answers a shop's PTTL or TTL, on a real server, with the key's
// time to live in the scene: the server's counts the time the World holds
// each key still (stillExtra), which the scene never lived. A script's
// PTTL is the server's, unchanged.
func (t *Tap) inScene(cmd redis.Cmder) {
	args := cmd.Args()
	if t.sceneTTL == nil || len(args) != 2 || cmd.Err() != nil {
		return
	}
	name, key := strings.ToLower(ArgString(args[0])), strings.TrimPrefix(ArgString(args[1]), t.ns)
	unit := time.Millisecond
	switch name {
	case "pttl":
	case "ttl":
		unit = time.Second
	default:
		return
	}
	switch c := cmd.(type) {
	case *redis.DurationCmd:
		if c.Val() > 0 {
			c.SetVal(t.sceneTTL(key, c.Val()).Truncate(unit))
		}
	case *redis.Cmd:
		if n, ok := c.Val().(int64); ok && n > 0 {
			c.SetVal(int64(t.sceneTTL(key, time.Duration(n)*unit) / unit))
		}
	}
}

// written calls after, if set, once cmds have run, unless every one of
// them only reads.
func (t *Tap) written(ctx context.Context, cmds ...redis.Cmder) {
	t.mu.Lock()
	after := t.after
	t.mu.Unlock()
	if after == nil && t.still == nil {
		return
	}
	var sent, names []string
	writes, all := false, false
	for _, cmd := range cmds {
		name := strings.ToLower(ArgString(cmd.Args()[0]))
		write := !readers[name] && !keyless[name]
		writes = writes || write || name == "exec"
		sent = append(sent, shortArgs(cmd.Args()))
		if !write {
			continue
		}
		args := make([]string, len(cmd.Args()))
		for i, a := range cmd.Args() {
			args[i] = ArgString(a)
		}
		idx, known := KeyIndexes(name, args)
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
		out[i] = ArgString(a)
	}
	return Shorten(strings.Join(out, " "))
}

// ProcessPipelineHook implements redis.Hook.
func (t *Tap) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		tx := 0
		if len(cmds) > 0 && strings.EqualFold(cmds[0].Name(), "multi") {
			t.mu.Lock()
			t.txs++
			tx = t.txs
			t.mu.Unlock()
		}
		sendCtx := ctx
		for _, cmd := range cmds {
			at, restore, onItsWay, err := t.see(ctx, cmd)
			if onItsWay {
				sendCtx = context.WithoutCancel(ctx)
			}
			if tx != 0 {
				t.mu.Lock()
				t.log[at].Tx = tx
				t.mu.Unlock()
			}
			if err != nil {
				// The pipeline is not sent: every command of it gets
				// the error, as every one does when the connection
				// drops.
				for _, c := range cmds {
					c.SetErr(err)
				}
				return err
			}
			defer restore()
		}
		t.inFlight.Add(1)
		sent := time.Now()
		err := next(sendCtx, cmds)
		t.noteWrites(sent, cmds...)
		t.answered.Add(1)
		t.inFlight.Add(-1)
		for _, cmd := range cmds {
			t.inScene(cmd)
		}
		t.written(ctx, cmds...)
		return err
	}
}

// see logs a command, holds it if the checker asked, and namespaces its
// keys. It returns the command's place in the log, a function that puts
// the shop's own key names back, and whether a HoldSent held it (to be
// sent whatever its context says).
func (t *Tap) see(ctx context.Context, cmd redis.Cmder) (int, func(), bool, error) {
	raw := cmd.Args()
	args := make([]string, len(raw))
	for i, a := range raw {
		args[i] = ArgString(a)
	}
	name := strings.ToLower(args[0])
	idx, known := KeyIndexes(name, args)
	c := Command{Name: name, Args: args[1:], Known: known}
	if t.now != nil {
		c.At = t.now()
	}
	for _, i := range idx {
		c.Keys = append(c.Keys, args[i])
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
	paused := t.paused
	stall := t.stall
	t.mu.Unlock()
	if paused != nil {
		<-paused
	}
	if stall != nil && stall.match(c) && !stall.wait(ctx) {
		t.mu.Lock()
		t.log[at].Said = "error: " + ctx.Err().Error()
		t.mu.Unlock()
		return at, nil, false, ctx.Err()
	}
	sent := false
	if caught {
		close(h.reached)
		select {
		case <-h.release:
			sent = h.sent
		case <-h.done(ctx):
			t.mu.Lock()
			t.log[at].Said = "error: " + ctx.Err().Error()
			t.mu.Unlock()
			return at, nil, false, ctx.Err()
		}
	}
	if err := t.failed(at, c); err != nil {
		return at, nil, false, err
	}

	if t.ns == "" {
		return at, func() {}, sent, nil
	}
	if !known {
		return at, nil, false, ErrNoKeys(name)
	}
	saved := slices.Clone(raw)
	for _, i := range idx {
		raw[i] = t.ns + args[i]
	}
	return at, func() { copy(raw, saved) }, sent, nil
}

// done notes how the command at place at in the log ended: what Redis
// said, and whether it knew the script.
func (t *Tap) done(at int, cmd redis.Cmder, err error) {
	reply := valueOf(cmd)
	t.mu.Lock()
	t.log[at].Reply = reply
	t.log[at].Said = saidOf(cmd, err)
	if err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT") {
		t.log[at].NoScript = true
	}
	c, note := t.log[at], t.note
	t.mu.Unlock()
	if note != nil {
		note(c)
	}
}

// valueOf is a command's answer when it is a number or a string: a value
// the server made, such as a counter's.
func valueOf(cmd redis.Cmder) string {
	switch c := cmd.(type) {
	case *redis.IntCmd:
		return strconv.FormatInt(c.Val(), 10)
	case *redis.StringCmd:
		return c.Val()
	case *redis.Cmd:
		switch v := c.Val().(type) {
		case string, int64:
			return fmt.Sprint(v)
		}
	}
	return ""
}

// saidOf says what Redis answered a command, for a timeline.
func saidOf(cmd redis.Cmder, err error) string {
	switch {
	case errors.Is(err, redis.Nil):
		return "(nil)"
	case err != nil:
		return "error: " + err.Error()
	}
	switch c := cmd.(type) {
	case *redis.StringCmd:
		return c.Val()
	case *redis.StatusCmd:
		return c.Val()
	case *redis.IntCmd:
		return strconv.FormatInt(c.Val(), 10)
	case *redis.BoolCmd:
		return strconv.FormatBool(c.Val())
	case *redis.Cmd:
		return fmt.Sprint(c.Val())
	}
	return ""
}

// ArgString is one argument of a command as Redis reads it.
func ArgString(a any) string {
	switch v := a.(type) {
	case string:
		return v
	case []byte:
		return string(v)
	}
	return fmt.Sprint(a)
}

// nth returns a match that accepts the k-th command naming a key (k from 1).
func Nth(k int) func(Command) bool {
	seen := 0
	return func(c Command) bool {
		if len(c.Keys) == 0 {
			return false
		}
		seen++
		return seen == k
	}
}

// attemptOn returns a match that accepts the first command that may take a
// lock on one of keys.
func AttemptOn(keys []string) func(Command) bool {
	return func(c Command) bool { return c.Attempt(keys) }
}

// Shorten folds a command's whitespace and cuts it to a line of a message.
func Shorten(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 90 {
		return s[:87] + "..."
	}
	return s
}
