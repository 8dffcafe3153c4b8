package catalog

import (
	"context"
	"fmt"
)

// Invalidation is one row of the price table's outbox: a committed write's
// note that a book's cached price is now old. SetPrice adds one in the
// same transaction as the new price, so that the note survives whatever
// happens to the writer after its commit: an instance that dies between
// the commit and its delete to the cache still leaves the delete owed, for
// a relay on another instance to send (the transactional outbox).
type Invalidation struct {
	ID      int64  // from 1, in commit order
	Book    string // the book whose price changed
	Version int64  // the row's version the write committed
}

// Pending returns the outbox's invalidations not yet marked sent, oldest
// first. It is a query, counted apart from the row reads (OutboxReads),
// and as cheap as an index scan: it takes no time on the clock.
func (db *DB) Pending(ctx context.Context) ([]Invalidation, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("catalog: reading the outbox: %w", err)
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	db.init()
	db.outboxReads++
	return db.unsent(), nil
}

// MarkSent marks the outbox's invalidation id as sent, so that Pending no
// longer returns it. Marking one twice, or one that another relay marked,
// is not an error: a delete sent twice is still one delete.
func (db *DB) MarkSent(ctx context.Context, id int64) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("catalog: marking invalidation %d sent: %w", id, err)
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	db.init()
	if id < 1 || id > int64(len(db.outbox)) {
		return fmt.Errorf("catalog: no invalidation %d in the outbox", id)
	}
	db.outbox[id-1].sent = true
	return nil
}

// Unsent returns the invalidations not yet marked sent, as Pending does,
// without counting a query: the checker's look at the outbox.
func (db *DB) Unsent() []Invalidation {
	db.mu.Lock()
	defer db.mu.Unlock()
	db.init()
	return db.unsent()
}

// OutboxReads returns how many times the outbox has been read (Pending).
func (db *DB) OutboxReads() int {
	db.mu.Lock()
	defer db.mu.Unlock()
	return db.outboxReads
}

// unsent lists the invalidations not yet sent. Called with mu held.
func (db *DB) unsent() []Invalidation {
	var out []Invalidation
	for _, r := range db.outbox {
		if !r.sent {
			out = append(out, r.Invalidation)
		}
	}
	return out
}

// outboxRow is an invalidation as the outbox keeps it.
type outboxRow struct {
	Invalidation
	sent bool
}
