package case08

import (
	"stampede/checker/fleet"

	"context"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// tap sits in front of the shop's Redis client. On a shared server it puts
// every key under the world's namespace, so that checks running side by
// side never see each other's keys, and it notes when each key was last
// written: on a real server Redis's clock runs, and a key's time to live as
// it was set is its time to live now plus the time since the write.
//
// Where each command's keys are is the fleet's table (fleet.KeyIndexes).
type tap struct {
	ns string // "" on the embedded server

	mu     sync.Mutex
	writes map[string]span // key -> when its last write was sent and answered

	// pending counts commands sent and not yet answered: the story's
	// driver waits for them, since a goroutine waiting for a real
	// server's answer looks parked to the scheduler.
	pending atomic.Int64
	// answered counts commands answered: progress, for a scene that waits
	// for the shop to come to rest.
	answered atomic.Int64

	// stage, when set, sees every single command twice, with the shop's own
	// key names: before it is sent (answered false) and after its answer
	// (answered true), when it is no longer counted as pending. The
	// explorer uses it to hold a command on the scene's clock, as a slow
	// network would (see explore.go). It is set before the shop is made.
	stage func(ctx context.Context, cmd redis.Cmder, answered bool)

	// refuse, when set, is asked about every command before it is sent,
	// with the shop's own key names: an error it returns is the command's
	// answer, and the command never reaches Redis (a replica that has
	// become read-only, say). A pipeline is refused whole when it refuses
	// any of its commands. It is set before the shop is made.
	refuse func(cmd redis.Cmder) error
}

// span is when a command was sent and when its answer came back, on the
// checker's clock.
type span struct{ sent, answered time.Time }

// wrote returns when each key was last written.
func (t *tap) wrote() map[string]span {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make(map[string]span, len(t.writes))
	for k, v := range t.writes {
		out[k] = v
	}
	return out
}

// DialHook implements redis.Hook.
func (t *tap) DialHook(next redis.DialHook) redis.DialHook { return next }

// ProcessHook implements redis.Hook.
func (t *tap) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if t.stage != nil {
			t.stage(ctx, cmd, false)
		}
		if err := t.refused(cmd); err != nil {
			return err
		}
		keys, restore, err := t.rename(cmd)
		if err != nil {
			cmd.SetErr(err)
			return err
		}
		t.pending.Add(1)
		sent := time.Now()
		err = next(ctx, cmd)
		t.note(keys, sent)
		restore()
		t.answered.Add(1)
		t.pending.Add(-1)
		if t.stage != nil {
			// go-redis sets a command's error once the hooks return; the
			// stage reads it from the command.
			if err != nil {
				cmd.SetErr(err)
			}
			t.stage(ctx, cmd, true)
		}
		return err
	}
}

// ProcessPipelineHook implements redis.Hook.
func (t *tap) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, cmd := range cmds {
			if err := t.refused(cmd); err != nil {
				for _, c := range cmds {
					c.SetErr(err)
				}
				return err
			}
		}
		var keys []string
		for _, cmd := range cmds {
			k, restore, err := t.rename(cmd)
			if err != nil {
				cmd.SetErr(err)
				return err
			}
			keys = append(keys, k...)
			defer restore()
		}
		t.pending.Add(1)
		defer t.pending.Add(-1)
		defer t.answered.Add(1)
		sent := time.Now()
		err := next(ctx, cmds)
		t.note(keys, sent)
		return err
	}
}

// refused answers cmd with refuse's error, when it has one.
func (t *tap) refused(cmd redis.Cmder) error {
	if t.refuse == nil {
		return nil
	}
	err := t.refuse(cmd)
	if err != nil {
		cmd.SetErr(err)
	}
	return err
}

// note records a write of keys sent at sent and answered now.
func (t *tap) note(keys []string, sent time.Time) {
	if len(keys) == 0 {
		return
	}
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.writes == nil {
		t.writes = map[string]span{}
	}
	for _, k := range keys {
		t.writes[k] = span{sent: sent, answered: now}
	}
}

// rename namespaces a command's keys. It returns the keys the command may
// write, and a function that puts the shop's own key names back.
func (t *tap) rename(cmd redis.Cmder) ([]string, func(), error) {
	raw := cmd.Args()
	args := make([]string, len(raw))
	for i, a := range raw {
		args[i] = fleet.ArgString(a)
	}
	name := strings.ToLower(args[0])
	idx, known := fleet.KeyIndexes(name, args)
	var written []string
	if !fleet.ReadOnly(name) {
		for _, i := range idx {
			written = append(written, args[i])
		}
	}
	if t.ns == "" {
		return written, func() {}, nil
	}
	if !known {
		return nil, nil, fleet.ErrNoKeys(name)
	}
	saved := slices.Clone(raw)
	for _, i := range idx {
		raw[i] = t.ns + args[i]
	}
	return written, func() { copy(raw, saved) }, nil
}
