package shelves

import (
	"slices"

	"stampede/shop/catalog"
)

// The contract of cases 1 to 5 names no shelves: Top takes any shelf the
// database holds, and the database may gain shelves while the shop runs
// (catalog.DB.Write). A check played only on the sixteen shelves the
// catalog starts with passes a shop that makes its locks for those
// sixteen in New and reads that table with no guard, or keys its locks by
// a name's first letters. So the scenes of every shelf at once play a
// world as wide as the contract: the catalog's shelves, and shelves the
// database gains once the shop is open, whose names share a prefix and a
// length with the catalog's.
var added = []struct {
	name  string
	books []string
}{
	// "best" and twelve letters, as new-releases.
	{"best-of-2026", []string{"The Winter Ferry", "Small Fires"}},
	// "new-", as new-releases.
	{"new-in-paperback", []string{"The Orchard Year", "Lamplight"}},
	// "staff-", as staff-picks.
	{"staff-favourites", []string{"The Borrowed Coast", "Quiet Hands"}},
	// A prefix of science and sci-fi, and three letters, as art.
	{"sci", []string{"The Shape of Atoms", "Deep Field"}},
}

// Wide returns every shelf of a scene as wide as the contract: the
// story's three first, then the rest of the catalog's, then the shelves
// the database gains once the shop is open (see Open).
func Wide() []string {
	return append(storyFirst(catalog.Shelves()), addedNames()...)
}

// addedNames returns the names of the shelves Open adds.
func addedNames() []string {
	names := make([]string, len(added))
	for i, a := range added {
		names[i] = a.name
	}
	return names
}

// Open writes the shelves the database gains into db: a check calls it
// once the shop is made, so that New cannot have seen them.
func Open(db *catalog.DB) {
	for _, a := range added {
		db.Write(a.name, a.books)
	}
}

// Want returns what the database holds for a shelf of Wide: what a visitor
// must get.
func Want(shelf string) []string {
	for _, a := range added {
		if a.name == shelf {
			return slices.Clone(a.books)
		}
	}
	return catalog.Books(shelf)
}
