package grade

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// A build slot is a folder in the user's cache where one kind of worker
// (one checkout, one set of targets, with or without the race detector and
// schedule points) is built each time, at the same paths: the overlay's
// files and the program. The go command decides from the program it finds
// there whether anything changed; when nothing did (a second `check` of
// the same code, `check all` after one case changed), it links nothing,
// where a fresh folder cost each check about 0.7 s of compiling and linking
// on two cores, before any child could start. A slot holds one program, so
// the disk it takes stays that of the cases graded, however often the code
// changes.
//
// A slot is locked while a build uses it, and its program copied out to
// the worker's own folder: children never run the slot's program, which
// the next build may replace.

// slotTrimAge is how long a slot may go unused before a trim removes it,
// and slotTrimEvery how often the slots are trimmed, in the manner of the
// go command's own cache.
const (
	slotTrimAge   = 5 * 24 * time.Hour
	slotTrimEvery = 24 * time.Hour
)

// slotsDir returns the folder of the machine's slots, or "" when there is
// no cache folder to keep them in.
func slotsDir() string {
	base, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	dir := filepath.Join(base, "stampede-lab", "workers")
	if os.MkdirAll(dir, 0o755) != nil {
		return ""
	}
	return dir
}

// inCheckout reports whether every target's files lie in the checkout at
// root: only such builds get a slot, so that the slots on a machine are
// the checkouts' cases, solutions and library, and not one for each folder
// of submissions ever graded.
func inCheckout(root string, targets []Target) bool {
	for _, t := range targets {
		if t.Src == "" {
			continue
		}
		rel, err := filepath.Rel(root, t.Src)
		if err != nil || !filepath.IsLocal(rel) {
			return false
		}
	}
	return true
}

// slotKey names the slot of a build: the checkout, its targets and where
// their files come from, and the build's kind.
func slotKey(root string, targets []Target, race, points bool) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%t\x00%t\x00", root, race, points)
	for _, t := range targets {
		fmt.Fprintf(h, "%s\x00%s\x00", t.Pkg, t.Src)
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// slot is a locked build slot.
type slot struct {
	dir  string
	lock *os.File
}

// openSlot locks the slot named key below dir, waiting while another build
// holds it. It returns nil when slots cannot be locked on this system.
func openSlot(ctx context.Context, dir, key string) (*slot, error) {
	path := filepath.Join(dir, key)
	for {
		if err := os.MkdirAll(path, 0o755); err != nil {
			return nil, fmt.Errorf("grade: %w", err)
		}
		lockPath := filepath.Join(path, "lock")
		f, err := os.OpenFile(lockPath, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return nil, fmt.Errorf("grade: %w", err)
		}
		got, err := waitLock(ctx, f)
		if err != nil || !got {
			f.Close()
			return nil, err
		}
		// A trim may have taken the slot away between the open and the
		// lock: the lock is this slot's only if its file is still there.
		held, err1 := f.Stat()
		now, err2 := os.Stat(lockPath)
		if err1 == nil && err2 == nil && os.SameFile(held, now) {
			t := time.Now()
			os.Chtimes(lockPath, t, t) // used now: a trim spares it
			return &slot{dir: path, lock: f}, nil
		}
		f.Close()
	}
}

// waitLock takes f's lock, polling, until ctx ends. It returns false with
// no error when locks are not supported here.
func waitLock(ctx context.Context, f *os.File) (bool, error) {
	for {
		got, err := tryLock(f)
		if err != nil {
			return false, nil // no locks here: the build goes to a folder of its own
		}
		if got {
			return true, nil
		}
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// close lets the slot go.
func (s *slot) close() { s.lock.Close() }

// copyOut copies the slot's file name to dst.
func (s *slot) copyOut(name, dst string) error {
	in, err := os.Open(filepath.Join(s.dir, name))
	if err != nil {
		return fmt.Errorf("grade: %w", err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o755)
	if err != nil {
		return fmt.Errorf("grade: %w", err)
	}
	_, err = io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("grade: copying the worker: %w", err)
	}
	return nil
}

// trimSlots removes the slots unused for slotTrimAge, at most once every
// slotTrimEvery (a stamp file says when it last ran). A slot in use is
// locked and left alone; one being removed is first moved aside, so that
// a build opening it at that moment sees it gone and makes it anew.
func trimSlots(dir string, now time.Time) {
	stamp := filepath.Join(dir, "trimmed")
	if fi, err := os.Stat(stamp); err == nil && now.Sub(fi.ModTime()) < slotTrimEvery {
		return
	}
	if os.WriteFile(stamp, nil, 0o644) != nil {
		return
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		path := filepath.Join(dir, e.Name())
		lockPath := filepath.Join(path, "lock")
		fi, err := os.Stat(lockPath)
		if err != nil || now.Sub(fi.ModTime()) < slotTrimAge {
			continue
		}
		f, err := os.OpenFile(lockPath, os.O_RDWR, 0)
		if err != nil {
			continue
		}
		if got, _ := tryLock(f); got {
			aside := filepath.Join(dir, "trimmed-"+e.Name()+"-"+strconv.FormatInt(now.UnixNano(), 36)+"-"+rand.Text()[:6])
			if os.Rename(path, aside) == nil {
				f.Close()
				os.RemoveAll(aside)
				continue
			}
		}
		f.Close()
	}
}
