package explore_test

import (
	"flag"
	"testing"

	"stampede/checker/explore"
	"stampede/checker/explore/exploretest"
	"stampede/checker/shelves"
	"stampede/shop/catalog"

	r1cow "stampede/checker/library/case01/right/cow"
	r1donechan "stampede/checker/library/case01/right/donechan"
	r1owner "stampede/checker/library/case01/right/owner"
	r1perkey "stampede/checker/library/case01/right/perkey"
	r1singleflight "stampede/checker/library/case01/right/singleflight"
	r1syncmap "stampede/checker/library/case01/right/syncmap"
	r2cond "stampede/checker/library/case02/right/cond"
	r2donechan "stampede/checker/library/case02/right/donechan"
	r2perkey "stampede/checker/library/case02/right/perkey"
	r2refcount "stampede/checker/library/case02/right/refcount"
	r2singleflight "stampede/checker/library/case02/right/singleflight"
	r2syncmap "stampede/checker/library/case02/right/syncmap"
	r3cond "stampede/checker/library/case03/right/cond"
	r3donechan "stampede/checker/library/case03/right/donechan"
	r3perkey "stampede/checker/library/case03/right/perkey"
	r3singleflight "stampede/checker/library/case03/right/singleflight"
	r3syncmap "stampede/checker/library/case03/right/syncmap"
	r4cow "stampede/checker/library/case04/right/cow"
	r4cowcalls "stampede/checker/library/case04/right/cowcalls"
	r4donechan "stampede/checker/library/case04/right/donechan"
	r4perkey "stampede/checker/library/case04/right/perkey"
	r4singleflight "stampede/checker/library/case04/right/singleflight"
	r4snapshot "stampede/checker/library/case04/right/snapshot"
	r4syncmap "stampede/checker/library/case04/right/syncmap"
	r5dochan "stampede/checker/library/case05/right/dochan"
	r5dochanforget "stampede/checker/library/case05/right/dochanforget"
	r5dochanwaits "stampede/checker/library/case05/right/dochanwaits"
	r5donechan "stampede/checker/library/case05/right/donechan"
	r5forgetflight "stampede/checker/library/case05/right/forgetflight"
	r5owner "stampede/checker/library/case05/right/owner"
	r5perkey "stampede/checker/library/case05/right/perkey"
	r5singleflight "stampede/checker/library/case05/right/singleflight"
	r5syncmap "stampede/checker/library/case05/right/syncmap"
	r5syncmapflight "stampede/checker/library/case05/right/syncmapflight"
	sol1 "stampede/solutions/case01"
	sol2 "stampede/solutions/case02"
	sol3 "stampede/solutions/case03"
	sol4 "stampede/solutions/case04"
	sol5 "stampede/solutions/case05"
)

// rightAnswer is an implementation that must pass every scene.
type rightAnswer struct {
	n       int
	pkg     string
	profile explore.Profile
	newShop shelves.New
}

// rightAnswers are every reference solution and known-right library
// entry of cases 1 to 5.
var rightAnswers = []rightAnswer{
	{1, "solutions/case01", explore.Case1, func(db *catalog.DB) shelves.Shop { return sol1.New(db) }},
	{1, "checker/library/case01/right/perkey", explore.Case1, func(db *catalog.DB) shelves.Shop { return r1perkey.New(db) }},
	{1, "checker/library/case01/right/singleflight", explore.Case1, func(db *catalog.DB) shelves.Shop { return r1singleflight.New(db) }},
	{1, "checker/library/case01/right/donechan", explore.Case1, func(db *catalog.DB) shelves.Shop { return r1donechan.New(db) }},
	{1, "checker/library/case01/right/syncmap", explore.Case1, func(db *catalog.DB) shelves.Shop { return r1syncmap.New(db) }},
	{1, "checker/library/case01/right/cow", explore.Case1, func(db *catalog.DB) shelves.Shop { return r1cow.New(db) }},
	{2, "solutions/case02", explore.Case2, func(db *catalog.DB) shelves.Shop { return sol2.New(db) }},
	{2, "checker/library/case02/right/perkey", explore.Case2, func(db *catalog.DB) shelves.Shop { return r2perkey.New(db) }},
	{2, "checker/library/case02/right/singleflight", explore.Case2, func(db *catalog.DB) shelves.Shop { return r2singleflight.New(db) }},
	{2, "checker/library/case02/right/donechan", explore.Case2, func(db *catalog.DB) shelves.Shop { return r2donechan.New(db) }},
	{2, "checker/library/case02/right/syncmap", explore.Case2, func(db *catalog.DB) shelves.Shop { return r2syncmap.New(db) }},
	{2, "checker/library/case02/right/refcount", explore.Case2, func(db *catalog.DB) shelves.Shop { return r2refcount.New(db) }},
	{2, "checker/library/case02/right/cond", explore.Case2, func(db *catalog.DB) shelves.Shop { return r2cond.New(db) }},
	{3, "solutions/case03", explore.Case3, func(db *catalog.DB) shelves.Shop { return sol3.New(db) }},
	{3, "checker/library/case03/right/perkey", explore.Case3, func(db *catalog.DB) shelves.Shop { return r3perkey.New(db) }},
	{3, "checker/library/case03/right/singleflight", explore.Case3, func(db *catalog.DB) shelves.Shop { return r3singleflight.New(db) }},
	{3, "checker/library/case03/right/donechan", explore.Case3, func(db *catalog.DB) shelves.Shop { return r3donechan.New(db) }},
	{3, "checker/library/case03/right/syncmap", explore.Case3, func(db *catalog.DB) shelves.Shop { return r3syncmap.New(db) }},
	{3, "checker/library/case03/right/cond", explore.Case3, func(db *catalog.DB) shelves.Shop { return r3cond.New(db) }},
	{4, "solutions/case04", explore.Case4, func(db *catalog.DB) shelves.Shop { return sol4.New(db) }},
	{4, "checker/library/case04/right/perkey", explore.Case4, func(db *catalog.DB) shelves.Shop { return r4perkey.New(db) }},
	{4, "checker/library/case04/right/singleflight", explore.Case4, func(db *catalog.DB) shelves.Shop { return r4singleflight.New(db) }},
	{4, "checker/library/case04/right/donechan", explore.Case4, func(db *catalog.DB) shelves.Shop { return r4donechan.New(db) }},
	{4, "checker/library/case04/right/snapshot", explore.Case4, func(db *catalog.DB) shelves.Shop { return r4snapshot.New(db) }},
	{4, "checker/library/case04/right/syncmap", explore.Case4, func(db *catalog.DB) shelves.Shop { return r4syncmap.New(db) }},
	{4, "checker/library/case04/right/cow", explore.Case4, func(db *catalog.DB) shelves.Shop { return r4cow.New(db) }},
	{4, "checker/library/case04/right/cowcalls", explore.Case4, func(db *catalog.DB) shelves.Shop { return r4cowcalls.New(db) }},
	{5, "solutions/case05", explore.Case5, func(db *catalog.DB) shelves.Shop { return sol5.New(db) }},
	{5, "checker/library/case05/right/perkey", explore.Case5, func(db *catalog.DB) shelves.Shop { return r5perkey.New(db) }},
	{5, "checker/library/case05/right/singleflight", explore.Case5, func(db *catalog.DB) shelves.Shop { return r5singleflight.New(db) }},
	{5, "checker/library/case05/right/donechan", explore.Case5, func(db *catalog.DB) shelves.Shop { return r5donechan.New(db) }},
	{5, "checker/library/case05/right/syncmap", explore.Case5, func(db *catalog.DB) shelves.Shop { return r5syncmap.New(db) }},
	{5, "checker/library/case05/right/dochan", explore.Case5, func(db *catalog.DB) shelves.Shop { return r5dochan.New(db) }},
	{5, "checker/library/case05/right/dochanwaits", explore.Case5, func(db *catalog.DB) shelves.Shop { return r5dochanwaits.New(db) }},
	{5, "checker/library/case05/right/dochanforget", explore.Case5, func(db *catalog.DB) shelves.Shop { return r5dochanforget.New(db) }},
	{5, "checker/library/case05/right/forgetflight", explore.Case5, func(db *catalog.DB) shelves.Shop { return r5forgetflight.New(db) }},
	{5, "checker/library/case05/right/syncmapflight", explore.Case5, func(db *catalog.DB) shelves.Shop { return r5syncmapflight.New(db) }},
	// Last: these shops start a goroutine that owns their state and stays
	// parked for the shop's life, a design and not a leak. The test's
	// process keeps every scene's, and each look at the process walks them
	// all; played second, case 1's owner left 1,000 goroutines behind that
	// slowed the 30 answers after it past the test's 30-minute timeout.
	{1, "checker/library/case01/right/owner", explore.Case1, func(db *catalog.DB) shelves.Shop { return r1owner.New(db) }},
	{5, "checker/library/case05/right/owner", explore.Case5, func(db *catalog.DB) shelves.Shop { return r5owner.New(db) }},
}

var (
	scenes = flag.Int("scenes", 50, "how many scenes each right answer must pass in a row (make proof plays 1,000)")
	seed   = flag.Uint64("seed", 1, "the seed of the first scene")
)

// TestRightAnswersKeepEveryInvariant plays -scenes scenes (50 by
// default, 1,000 in make proof) on every reference solution and
// known-right entry of cases 1 to 5: a right answer must never fail the
// explorer. Run it with -race, as the grader runs the check.
func TestRightAnswersKeepEveryInvariant(t *testing.T) {
	exploretest.Prove(t, *seed, *scenes, answers()...)
}

// answers are the right answers of cases 1 to 5, each with its explorer.
func answers() []exploretest.Answer {
	var out []exploretest.Answer
	for _, r := range rightAnswers {
		out = append(out, exploretest.Answer{Pkg: r.pkg, Run: explore.For(r.newShop, r.profile).Run})
	}
	return out
}

// TestEveryRightAnswerIsProved holds the list above to the library: a
// known-right entry of cases 1 to 5 that is not in it is proved only by
// the library's one run of the check. (Six were missing once.)
func TestEveryRightAnswerIsProved(t *testing.T) {
	exploretest.Every(t, "../library", []int{1, 2, 3, 4, 5}, answers()...)
}
