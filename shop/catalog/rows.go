package catalog

import (
	"context"
	"fmt"
	"maps"
	"slices"
)

// Row is one book's row in the price table. Version goes up by one with
// every committed write, so two rows of a book can be told apart, and
// ordered, without comparing their prices.
type Row struct {
	Book    string
	Price   int // in cents
	Version int64
}

// RowHook runs during a row's read or write, on the caller's goroutine. The
// checker uses it to hold a read whose rows are already read, or a write
// just before its commit. An error from the hook becomes the call's error
// (a write's is a rollback).
type RowHook func(ctx context.Context, book string) error

// WithReadHook sets a hook that runs in every row read after the row has
// been read and before the reply reaches the caller: a read held there
// carries the row as it was when the query began.
func WithReadHook(h RowHook) Option { return func(db *DB) { db.readHook = h } }

// WithCommitHook sets a hook that runs in every write inside its
// transaction, just before the commit: a write held there has not changed
// what any read sees yet.
func WithCommitHook(h RowHook) Option { return func(db *DB) { db.commitHook = h } }

// WithCommittedHook sets a hook that runs in every write once it has
// committed, outside its transaction, before the row reaches the caller: a
// write held there has changed what every read sees, and its caller does
// not know yet (the reply is on its way). An error from the hook becomes
// the call's error; the commit stands.
func WithCommittedHook(h RowHook) Option { return func(db *DB) { db.committedHook = h } }

// WithBook adds a book to this database's price table, at version 1,
// beside the books every database has: a name no shop can have known
// before (one that holds a colon, a space and other separators, say).
func WithBook(book string, price int) Option {
	return func(db *DB) {
		if db.extra == nil {
			db.extra = map[string]int{}
		}
		db.extra[book] = price
	}
}

// Row reads a book's row: the slow query of the write-path cases. It
// counts as one read of the book whether it succeeds or not. The row is
// read when the query begins (as under Read Committed): a write that
// commits while the reply is on its way is not in it.
func (db *DB) Row(ctx context.Context, book string) (Row, error) {
	db.mu.Lock()
	db.init()
	row, ok := db.rows[book]
	db.rowReads[book]++
	db.busy += db.cost
	db.mu.Unlock()
	if !ok {
		return Row{}, fmt.Errorf("catalog: no book %q", book)
	}
	if db.readHook != nil {
		if err := db.readHook(ctx, book); err != nil {
			return Row{}, fmt.Errorf("catalog: reading %s: %w", book, err)
		}
	}
	if err := db.clock.Sleep(ctx, db.cost); err != nil {
		return Row{}, fmt.Errorf("catalog: reading %s: %w", book, err)
	}
	return row, nil
}

// SetPrice changes a book's price in a transaction and returns the row as
// committed, with its new version. The same transaction adds the write's
// invalidation to the outbox (see Pending). Writes run one at a time: a second
// write waits for the first to commit or roll back, or for its ctx.
func (db *DB) SetPrice(ctx context.Context, book string, price int) (Row, error) {
	row, err := db.commit(ctx, book, price)
	if err != nil || db.committedHook == nil {
		return row, err
	}
	if err := db.committedHook(ctx, book); err != nil {
		return row, fmt.Errorf("catalog: writing %s: committed, but: %w", book, err)
	}
	return row, nil
}

// commit is SetPrice's transaction.
func (db *DB) commit(ctx context.Context, book string, price int) (Row, error) {
	db.mu.Lock()
	db.init()
	txn := db.txn
	db.mu.Unlock()
	select {
	case txn <- struct{}{}:
	case <-ctx.Done():
		return Row{}, fmt.Errorf("catalog: writing %s: %w", book, ctx.Err())
	}
	defer func() { <-txn }()

	db.mu.Lock()
	_, ok := db.rows[book]
	db.mu.Unlock()
	if !ok {
		return Row{}, fmt.Errorf("catalog: no book %q", book)
	}
	if db.commitHook != nil {
		if err := db.commitHook(ctx, book); err != nil {
			return Row{}, fmt.Errorf("catalog: writing %s: rolled back: %w", book, err)
		}
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	row := db.rows[book]
	row.Price, row.Version = price, row.Version+1
	db.rows[book] = row
	db.writes++
	// The outbox row is part of the same transaction: the commit and its
	// invalidation stand or fall together.
	db.outbox = append(db.outbox, outboxRow{Invalidation: Invalidation{ID: int64(len(db.outbox) + 1), Book: book, Version: row.Version}})
	return row, nil
}

// Peek returns a book's committed row, and whether the book has one. It is
// the checker's look at the truth: not a query, and not counted.
func (db *DB) Peek(book string) (Row, bool) {
	db.mu.Lock()
	defer db.mu.Unlock()
	db.init()
	row, ok := db.rows[book]
	return row, ok
}

// RowReads returns how many times a book's row has been read.
func (db *DB) RowReads(book string) int {
	db.mu.Lock()
	defer db.mu.Unlock()
	return db.rowReads[book]
}

// Writes returns how many writes have committed.
func (db *DB) Writes() int {
	db.mu.Lock()
	defer db.mu.Unlock()
	return db.writes
}

// init gives a database its price table on first use. Called with mu held.
func (db *DB) init() {
	if db.rows != nil {
		return
	}
	db.rows = make(map[string]Row, len(prices))
	for book, price := range prices {
		db.rows[book] = Row{Book: book, Price: price, Version: 1}
	}
	for book, price := range db.extra {
		db.rows[book] = Row{Book: book, Price: price, Version: 1}
	}
	db.rowReads = make(map[string]int)
	db.txn = make(chan struct{}, 1)
}

// prices are the books' prices, in cents, before any write.
var prices = map[string]int{
	"The Night Library":     1299,
	"Salt and Stone":        1850,
	"A Map of Small Rivers": 999,
	"The Quiet Engine":      2400,
	"Winter Orchard":        1575,
}

// Priced returns the books that have a price, sorted.
func Priced() []string { return slices.Sorted(maps.Keys(prices)) }
