// Package library is the lab's proof that its checks give the right
// verdicts: a library of known-wrong answers, each of which must fail the
// checks named for it, and of known-right answers written differently from
// the reference solutions, each of which must pass every check. The table
// of verdicts is in library_test.go; every entry is graded by the same
// worker and child processes that grade a student.
//
// Each entry is a package laid out like a student's case: a New and the
// methods the case calls. The shipped/ entries are copies of cases/ as the
// lab ships them; a test keeps them in step.
package library
