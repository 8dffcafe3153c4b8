// Package checker knows the lab's cases. Its subpackages build and run the
// worker that grades a case (grade), drive student code (harness), and hold
// each case's story and checks (case01, case02, ...).
package checker

import (
	"stampede/checker/case01"
	"stampede/checker/case02"
	"stampede/checker/case03"
	"stampede/checker/case04"
	"stampede/checker/case05"
	"stampede/checker/case06"
	"stampede/checker/case07"
	"stampede/checker/case08"
	"stampede/checker/case09"
	"stampede/checker/case10"
	"stampede/checker/case11"
	"stampede/checker/check"
)

// Cases returns every case of the lab, in order.
func Cases() []check.Case {
	return []check.Case{
		case01.Case,
		case02.Case,
		case03.Case,
		case04.Case,
		case05.Case,
		case06.Case,
		case07.Case,
		case08.Case,
		case09.Case,
		case10.Case,
		case11.Case,
	}
}

// Find returns case n.
func Find(n int) (check.Case, bool) {
	for _, c := range Cases() {
		if c.Number == n {
			return c, true
		}
	}
	return check.Case{}, false
}
