// Package library is the lab's proof that its checks give the right
// verdicts: a library of known-wrong answers, each of which must fail the
// checks named for it, and of known-right answers written differently from
// the reference solutions, each of which must pass every check. The table
// of verdicts is in library_test.go; every entry is graded by the same
// worker and child processes that grade a student.
//
// A known-wrong entry is its mistake and nothing else: wrong/NAME.patch says
// the mistake in words, names its base (the reference solution or the
// shipped case) and gives the change as a unified diff of the base's
// files (see package patch). The tests apply it to the base as it is now
// and grade what it makes, laid where the folder wrong/NAME would be; an
// entry that no longer applies fails TestEntriesApply, named. The few
// wrong entries that other tests import, those written from scratch (whose
// change to any base would be longer than they are), and every right/
// entry (another design, not a slip) are packages laid out like a
// student's case: a New and the methods the case calls. A right entry that
// is the reference with one addition (a watchdog, say) is a patch too,
// right/NAME.patch, whose words say what it adds and why that is right.
// The shipped/ entries are copies of
// cases/ as the lab ships them; a test keeps them in step.
//
// The verdicts are in one place, each case's table (caseNN_test.go); an
// entry says what it gets wrong, not what it fails.
package library
