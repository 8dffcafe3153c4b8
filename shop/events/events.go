// Package events is the box office's database: one page per event, read by
// a query that the database pays for. Case 8 puts a Redis cache in front of
// it, as cases 1 to 7 put one in front of the catalog.
//
// The database counts every query per event, and how many run at once: the
// number a real database's connection pool caps.
package events

import (
	"context"
	"fmt"
	"sync"
	"time"

	"stampede/shop/clock"
)

// QueryCost is how long one event page query takes in the story: 8 ms, a
// join the database answers quickly when nobody crowds it.
const QueryCost = 8 * time.Millisecond

// Pool is how many connections the database's pool holds: more queries at
// once than this only queue inside the database.
const Pool = 20

// Hook runs at the start of every query, on the caller's goroutine, once the
// query has been counted as running. The checker uses it to hold queries at a
// gate. An error from the hook becomes the query's error.
type Hook func(ctx context.Context, id int) error

// DB is the events database. It is safe for concurrent use.
type DB struct {
	cost  time.Duration
	clock clock.Clock
	hook  Hook

	mu       sync.Mutex
	queries  map[int]int
	total    int
	running  int
	most     int
	started  []time.Time // when each query started, by the database's clock
	keepLogs bool
}

// Option configures a DB.
type Option func(*DB)

// WithCost sets how long each query takes (QueryCost by default).
func WithCost(d time.Duration) Option { return func(db *DB) { db.cost = d } }

// WithClock sets the clock queries sleep on and are timed by (the real clock
// by default).
func WithClock(c clock.Clock) Option { return func(db *DB) { db.clock = c } }

// WithHook sets a hook that runs at the start of every query.
func WithHook(h Hook) Option { return func(db *DB) { db.hook = h } }

// WithLog makes the database remember when each query started (Starts).
func WithLog() Option { return func(db *DB) { db.keepLogs = true } }

// New returns a database with the given options.
func New(opts ...Option) *DB {
	db := &DB{cost: QueryCost, clock: clock.Real{}, queries: make(map[int]int)}
	for _, o := range opts {
		o(db)
	}
	return db
}

// Page runs the query for an event's page. Every call counts as one query,
// whether it succeeds or not. Events are numbered from 1.
func (db *DB) Page(ctx context.Context, id int) (string, error) {
	if id < 1 {
		return "", fmt.Errorf("events: no event %d", id)
	}
	db.mu.Lock()
	db.queries[id]++
	db.total++
	db.running++
	db.most = max(db.most, db.running)
	if db.keepLogs {
		db.started = append(db.started, db.clock.Now())
	}
	db.mu.Unlock()
	defer func() {
		db.mu.Lock()
		db.running--
		db.mu.Unlock()
	}()

	if db.hook != nil {
		if err := db.hook(ctx, id); err != nil {
			return "", fmt.Errorf("events: query %d: %w", id, err)
		}
	}
	if err := db.clock.Sleep(ctx, db.cost); err != nil {
		return "", fmt.Errorf("events: query %d: %w", id, err)
	}
	return PageOf(id), nil
}

// Queries returns how many queries the event has had.
func (db *DB) Queries(id int) int {
	db.mu.Lock()
	defer db.mu.Unlock()
	return db.queries[id]
}

// Total returns how many queries all events have had together.
func (db *DB) Total() int {
	db.mu.Lock()
	defer db.mu.Unlock()
	return db.total
}

// Running returns how many queries are in the database now.
func (db *DB) Running() int {
	db.mu.Lock()
	defer db.mu.Unlock()
	return db.running
}

// Most returns the most queries that were ever in the database at once.
func (db *DB) Most() int {
	db.mu.Lock()
	defer db.mu.Unlock()
	return db.most
}

// Starts returns when each query started, with WithLog.
func (db *DB) Starts() []time.Time {
	db.mu.Lock()
	defer db.mu.Unlock()
	return append([]time.Time(nil), db.started...)
}

// PageOf returns what the database holds for an event: the page every reader
// should get. It is not a query and is not counted.
func PageOf(id int) string {
	acts := []string{"The Night Library Quartet", "Salt and Stone", "Small Rivers", "The Quiet Engine",
		"Winter Orchard", "Paper Lanterns", "Glass Weather", "Harbour Lights", "Field Notes", "The Long Noon"}
	halls := []string{"the Hall", "the Studio", "the Old Mill", "the Annex"}
	return fmt.Sprintf("event %d: %s at %s, doors 19:%02d", id, acts[id%len(acts)], halls[(id/len(acts))%len(halls)], id%60)
}

// IDs returns the events numbered 1 to n.
func IDs(n int) []int {
	ids := make([]int, n)
	for i := range ids {
		ids[i] = i + 1
	}
	return ids
}
