package case04

import (
	"context"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"stampede/shop/catalog"
)

// held is a set of the shop's own locks that the checker holds the way a
// hit that shares would hold them: each sync.RWMutex for reading, each
// plain sync.Mutex outright (a plain mutex has no shared side, so a hit
// that takes one takes it alone).
//
// While they are held, a hit that takes no exclusive lock goes through, as
// it would beside any number of other hits. A hit that asks for the write
// side of an RWMutex, or for any plain mutex, waits, and is caught parked in
// sync.RWMutex.Lock or sync.Mutex.Lock. Holding a lock for reading never
// stops a reader, and a mutex that a hit does not take never stops it, so
// a correct hit cannot be held up: the only error left is a lock the
// checker cannot reach (a package variable, a lock captured in a closure),
// which gives a false PASS, never a false FAIL.
type held struct {
	release []func()
	seen    map[seenKey]bool
	rw      []*sync.RWMutex // the RWMutexes among them
}

type seenKey struct {
	addr uintptr
	typ  reflect.Type
}

var (
	mutexType   = reflect.TypeFor[sync.Mutex]()
	rwMutexType = reflect.TypeFor[sync.RWMutex]()
	syncMapType = reflect.TypeFor[sync.Map]()
	valueType   = reflect.TypeFor[atomic.Value]()
	dbType      = reflect.TypeFor[catalog.DB]()
	ctxType     = reflect.TypeFor[context.Context]()
)

// maxDepth bounds the walk through the shop's values.
const maxDepth = 64

// holdLocks finds every sync.Mutex and sync.RWMutex reachable from shop
// (through fields, pointers, interfaces, slices, arrays, maps, sync.Map,
// atomic.Value and atomic.Pointer) and holds it as a sharing hit would. A
// lock that someone else holds is left alone: the checker never waits.
// The caller must make sure no goroutine of the shop is running.
func holdLocks(shop any) *held {
	h := &held{seen: map[seenKey]bool{}}
	h.walk(reflect.ValueOf(shop), 0)
	return h
}

// count returns how many locks are held.
func (h *held) count() int { return len(h.release) }

// releaseAll lets every held lock go, the last taken first.
func (h *held) releaseAll() {
	for i := len(h.release) - 1; i >= 0; i-- {
		h.release[i]()
	}
	h.release = nil
}

func (h *held) walk(v reflect.Value, depth int) {
	if !v.IsValid() || depth > maxDepth {
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return
		}
		key := seenKey{v.Pointer(), v.Type()}
		if h.seen[key] {
			return
		}
		h.seen[key] = true
		h.walk(v.Elem(), depth+1)
	case reflect.Interface:
		if v.IsNil() || v.Type() == ctxType {
			return
		}
		h.walk(v.Elem(), depth+1)
	case reflect.Struct:
		h.walkStruct(v, depth)
	case reflect.Slice, reflect.Array:
		if elemMayLock(v.Type().Elem()) {
			for i := range v.Len() {
				h.walk(v.Index(i), depth+1)
			}
		}
	case reflect.Map:
		if elemMayLock(v.Type().Key()) || elemMayLock(v.Type().Elem()) {
			it := v.MapRange()
			for it.Next() {
				h.walk(it.Key(), depth+1)
				h.walk(it.Value(), depth+1)
			}
		}
	}
}

func (h *held) walkStruct(v reflect.Value, depth int) {
	t := v.Type()
	switch {
	case t == dbType || t.PkgPath() == "context":
		return // the database is not the shop's, and contexts are the caller's
	case t == mutexType:
		if v.CanAddr() {
			m := (*sync.Mutex)(unsafe.Pointer(v.UnsafeAddr()))
			if m.TryLock() {
				h.release = append(h.release, m.Unlock)
			}
		}
		return
	case t == rwMutexType:
		if v.CanAddr() {
			m := (*sync.RWMutex)(unsafe.Pointer(v.UnsafeAddr()))
			if m.TryRLock() {
				h.release = append(h.release, m.RUnlock)
				h.rw = append(h.rw, m)
			}
		}
		return
	case t == syncMapType:
		if v.CanAddr() {
			m := (*sync.Map)(unsafe.Pointer(v.UnsafeAddr()))
			m.Range(func(k, x any) bool {
				h.walk(reflect.ValueOf(k), depth+1)
				h.walk(reflect.ValueOf(x), depth+1)
				return true
			})
		}
		return
	case t == valueType:
		if v.CanAddr() {
			x := (*atomic.Value)(unsafe.Pointer(v.UnsafeAddr())).Load()
			h.walk(reflect.ValueOf(x), depth+1)
		}
		return
	case t.PkgPath() == "sync/atomic" && strings.HasPrefix(t.Name(), "Pointer["):
		if v.CanAddr() {
			// NewAt gives a value that may call methods, which a value
			// reached through unexported fields may not.
			p := reflect.NewAt(t, unsafe.Pointer(v.UnsafeAddr()))
			if load := p.MethodByName("Load"); load.IsValid() {
				h.walk(load.Call(nil)[0], depth+1)
			}
		}
		return
	}
	for i := range v.NumField() {
		h.walk(v.Field(i), depth+1)
	}
}

// elemMayLock reports whether values of type t can hold or lead to a lock,
// so that the walk skips the books themselves: slices of strings.
func elemMayLock(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128, reflect.String,
		reflect.Chan, reflect.Func, reflect.UnsafePointer:
		return false
	case reflect.Slice, reflect.Array, reflect.Pointer:
		return elemMayLock(t.Elem())
	}
	return true
}
