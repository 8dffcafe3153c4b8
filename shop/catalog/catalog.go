// Package catalog is the shop's database: a catalogue of books whose shelf
// queries are slow, and which counts every query it answers.
//
// The cases put a cache in front of it. The database is the part that must
// be protected: every call to Top is a query the database pays for.
package catalog

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"stampede/shop/clock"
)

// QueryCost is how long one shelf query takes in the shop's story: 0.2 s.
const QueryCost = 200 * time.Millisecond

// The shelves the shop has.
const (
	Bestsellers = "bestsellers"
	NewReleases = "new-releases"
	StaffPicks  = "staff-picks"
)

// Hook runs at the start of every query, on the caller's goroutine, after
// the query has been counted. The checker uses it to hold a query at a gate,
// or to make one fail. An error from the hook becomes the query's error.
type Hook func(ctx context.Context, shelf string) error

// DB is the catalog database. It is safe for concurrent use.
type DB struct {
	cost  time.Duration
	clock clock.Clock
	hook  Hook

	mu      sync.Mutex
	queries map[string]int
	busy    time.Duration
	written map[string][]string // shelf -> its books since Write, for this database only

	// The price table of the write-path cases (rows.go), made on first use.
	readHook, commitHook, committedHook RowHook
	extra                               map[string]int // books beyond the shared table (WithBook)
	rows                                map[string]Row
	rowReads                            map[string]int
	writes                              int
	txn                                 chan struct{} // one write at a time
	// The outbox (outbox.go): every write's invalidation, in commit order.
	outbox      []outboxRow
	outboxReads int
}

// Option configures a DB.
type Option func(*DB)

// WithCost sets how long each query takes (QueryCost by default). A cost of
// zero makes queries instant.
func WithCost(d time.Duration) Option { return func(db *DB) { db.cost = d } }

// WithClock sets the clock that queries sleep on (the real clock by default).
func WithClock(c clock.Clock) Option { return func(db *DB) { db.clock = c } }

// WithHook sets a hook that runs at the start of every query.
func WithHook(h Hook) Option { return func(db *DB) { db.hook = h } }

// New returns a database with the given options.
func New(opts ...Option) *DB {
	db := &DB{cost: QueryCost, clock: clock.Real{}, queries: make(map[string]int)}
	for _, o := range opts {
		o(db)
	}
	return db
}

// Top runs the slow query for a shelf and returns its books, best first.
// Every call counts as one query, whether it succeeds or not.
func (db *DB) Top(ctx context.Context, shelf string) ([]string, error) {
	db.mu.Lock()
	books, ok := db.written[shelf]
	if !ok {
		books, ok = shelves[shelf]
	}
	if !ok {
		db.mu.Unlock()
		return nil, fmt.Errorf("catalog: no shelf %q", shelf)
	}
	db.queries[shelf]++
	db.busy += db.cost
	db.mu.Unlock()

	if db.hook != nil {
		if err := db.hook(ctx, shelf); err != nil {
			return nil, fmt.Errorf("catalog: query %s: %w", shelf, err)
		}
	}
	if err := db.clock.Sleep(ctx, db.cost); err != nil {
		return nil, fmt.Errorf("catalog: query %s: %w", shelf, err)
	}
	return slices.Clone(books), nil
}

// Write changes what this database holds for a shelf from now on: a query
// that starts later answers books, one already running answers what it
// read when it started, as a row read before an update would. Only this
// database changes; Books still says what the shop ships with. Compare
// (checker/compare) uses it to play a write in the middle of a rebuild.
func (db *DB) Write(shelf string, books []string) {
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.written == nil {
		db.written = make(map[string][]string)
	}
	db.written[shelf] = slices.Clone(books)
}

// Queries returns how many queries the shelf has had.
func (db *DB) Queries(shelf string) int {
	db.mu.Lock()
	defer db.mu.Unlock()
	return db.queries[shelf]
}

// TotalQueries returns how many queries all shelves have had together.
func (db *DB) TotalQueries() int {
	db.mu.Lock()
	defer db.mu.Unlock()
	n := 0
	for _, q := range db.queries {
		n += q
	}
	return n
}

// Busy returns the database time spent: the cost of every query started.
func (db *DB) Busy() time.Duration {
	db.mu.Lock()
	defer db.mu.Unlock()
	return db.busy
}

// Books returns what the database holds for a shelf: the answer every
// visitor should get. It is not a query and is not counted.
func Books(shelf string) []string { return slices.Clone(shelves[shelf]) }

var shelves = map[string][]string{
	Bestsellers: {
		"The Night Library", "Salt and Stone", "A Map of Small Rivers",
		"The Quiet Engine", "Winter Orchard",
	},
	NewReleases: {
		"Paper Lanterns", "The Long Noon", "Under the Viaduct",
		"Glass Weather", "North of Everything",
	},
	StaffPicks: {
		"The Clockmaker's Daughter", "Field Notes on Rain", "Harbour Lights",
	},
	// The shelves below are the rest of the shop. The stories use the three
	// above; the checks use them all, so that a table that gives two shelves
	// one slot (by the name's length, or a hash modulo a small number) is
	// caught sharing it.
	"poetry":         {"Tide Tables", "Small Hours"},
	"sci-fi":         {"The Ninth Orbit", "Rust Moon"},
	"travel":         {"Slow Trains East", "The Salt Road"},
	"history":        {"The Ledger of Ghent", "Bread and Iron"},
	"science":        {"The Patient Cell", "Counting Stars"},
	"crime":          {"A Quiet Alibi", "The Canal Murders"},
	"kids":           {"Otter Goes Sailing", "The Sleepy Dragon"},
	"art":            {"Blue Period", "Drawing Light"},
	"cookbooks":      {"One Pot Winters", "The Bread Year"},
	"biography":      {"A Life in Maps", "The Lighthouse Keeper"},
	"classics":       {"The Mill Pond", "Seven Sisters"},
	"graphic-novels": {"Inkwell City", "The Paper Knight"},
	"local-authors":  {"Harbour Streets", "Fog on the Green"},
}

// Shelves returns the name of every shelf the database holds, sorted.
func Shelves() []string { return slices.Sorted(maps.Keys(shelves)) }
