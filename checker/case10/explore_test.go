package case10

import (
	"context"
	"flag"
	"testing"

	"github.com/redis/go-redis/v9"

	"stampede/checker/explore/exploretest"
	"stampede/checker/harness"
	revalshareload "stampede/checker/library/case10/right/evalsha-reload"
	rfencing "stampede/checker/library/case10/right/fencing"
	rluaops "stampede/checker/library/case10/right/luaops"
	rtwodelsleasefirst "stampede/checker/library/case10/right/twodels-leasefirst"
	rversioncas "stampede/checker/library/case10/right/versioncas"
	rwriterlease "stampede/checker/library/case10/right/writerlease"
	shipped "stampede/checker/library/case10/shipped"
	wdeleteafter "stampede/checker/library/case10/wrong/deleteafter"
	wdeletebefore "stampede/checker/library/case10/wrong/deletebefore"
	wdoubledelete "stampede/checker/library/case10/wrong/doubledelete"
	wevalshaonescript "stampede/checker/library/case10/wrong/evalsha-one-script"
	wevalshareloadonce "stampede/checker/library/case10/wrong/evalsha-reload-once"
	wevalshastartupload "stampede/checker/library/case10/wrong/evalsha-startup-load"
	wexpirelater "stampede/checker/library/case10/wrong/expirelater"
	wdeadlineread "stampede/checker/library/case10/wrong/explore-deadlineread"
	wlocalcopy "stampede/checker/library/case10/wrong/explore-localcopy"
	woneversion "stampede/checker/library/case10/wrong/explore-oneversion"
	wgetthenset "stampede/checker/library/case10/wrong/getthenset"
	wkeeplease "stampede/checker/library/case10/wrong/keeplease"
	wleasebeforecommit "stampede/checker/library/case10/wrong/lease-before-commit"
	wlosersquery "stampede/checker/library/case10/wrong/losersquery"
	wnobound "stampede/checker/library/case10/wrong/nobound"
	wnottl "stampede/checker/library/case10/wrong/nottl"
	wsametoken "stampede/checker/library/case10/wrong/sametoken"
	wseededtoken "stampede/checker/library/case10/wrong/seededtoken"
	wsetonwrite "stampede/checker/library/case10/wrong/setonwrite"
	wtextversion "stampede/checker/library/case10/wrong/textversion"
	wtwodelspricefirst "stampede/checker/library/case10/wrong/two-dels-price-first"
	"stampede/shop/catalog"
	"stampede/shop/clock"
	solution "stampede/solutions/case10"
)

var exploreScenes, exploreSeed = exploretest.Flags(8)

func mkShop[S Shop](f func(*catalog.DB, *redis.Client, clock.Clock) S) NewShop {
	return func(db *catalog.DB, rdb *redis.Client, clk clock.Clock) Shop { return f(db, rdb, clk) }
}

// TestExploreRightAnswers plays -scenes scenes (run it with -scenes 1000
// for the proof) on the solution and every known-right entry: none may
// fail. (Not in parallel: settling waits for the whole process.)
func TestExploreRightAnswers(t *testing.T) {
	answer := func(pkg string, mk NewShop) exploretest.Answer {
		return exploretest.Answer{Pkg: pkg, Run: explorer(mk).Run}
	}
	answers := []exploretest.Answer{
		answer("solutions/case10", mkShop(solution.New)),
		answer("checker/library/case10/right/fencing", mkShop(rfencing.New)),
		answer("checker/library/case10/right/luaops", mkShop(rluaops.New)),
		answer("checker/library/case10/right/versioncas", mkShop(rversioncas.New)),
		answer("checker/library/case10/right/twodels-leasefirst", mkShop(rtwodelsleasefirst.New)),
		answer("checker/library/case10/right/evalsha-reload", mkShop(revalshareload.New)),
		answer("checker/library/case10/right/writerlease", mkShop(rwriterlease.New)),
	}
	exploretest.Every(t, "../library", []int{10}, answers...)
	exploretest.Prove(t, *exploreSeed, *exploreScenes, answers...)
}

func TestExploreFailsTheShippedCode(t *testing.T) {
	exploretest.Fails(t, "checker/library/case10/shipped", explorer(mkShop(shipped.New)).Run, 20)
}

var rates = flag.Int("rates", 0, "with N > 0: play N scenes, one at a time, on every known-wrong entry, and log how many break an invariant")

// TestExploreCatchRates measures, for each known-wrong entry, the share of
// scenes that break an invariant: the library's verdicts and their
// computed chances of a miss come from it. Run it with -rates 200.
func TestExploreCatchRates(t *testing.T) {
	if *rates == 0 {
		t.Skip("run with -rates N")
	}
	for _, r := range []struct {
		name string
		mk   NewShop
	}{
		{"shipped", mkShop(shipped.New)},
		{"wrong/deletebefore", mkShop(wdeletebefore.New)},
		{"wrong/setonwrite", mkShop(wsetonwrite.New)},
		{"wrong/deleteafter", mkShop(wdeleteafter.New)},
		{"wrong/getthenset", mkShop(wgetthenset.New)},
		{"wrong/keeplease", mkShop(wkeeplease.New)},
		{"wrong/sametoken", mkShop(wsametoken.New)},
		{"wrong/losersquery", mkShop(wlosersquery.New)},
		{"wrong/nobound", mkShop(wnobound.New)},
		{"wrong/textversion", mkShop(wtextversion.New)},
		{"wrong/doubledelete", mkShop(wdoubledelete.New)},
		{"wrong/nottl", mkShop(wnottl.New)},
		{"wrong/expirelater", mkShop(wexpirelater.New)},
		{"wrong/seededtoken", mkShop(wseededtoken.New)},
		{"wrong/explore-localcopy", mkShop(wlocalcopy.New)},
		{"wrong/explore-oneversion", mkShop(woneversion.New)},
		{"wrong/explore-deadlineread", mkShop(wdeadlineread.New)},
		{"wrong/two-dels-price-first", mkShop(wtwodelspricefirst.New)},
		{"wrong/lease-before-commit", mkShop(wleasebeforecommit.New)},
		{"wrong/evalsha-startup-load", mkShop(wevalshastartupload.New)},
		{"wrong/evalsha-one-script", mkShop(wevalshaonescript.New)},
		{"wrong/evalsha-reload-once", mkShop(wevalshareloadonce.New)},
	} {
		t.Run(r.name, func(t *testing.T) {
			h := harness.New(context.Background(), "stampede/checker/library/case10/"+r.name, harness.DefaultBound)
			caught := 0
			var seeds []uint64
			for i := range *rates {
				sc := drawScene10(*exploreSeed + uint64(i))
				if res := playScene10(h, r.mk, sc, false); res.Bad != "" {
					caught++
					if len(seeds) < 5 {
						seeds = append(seeds, sc.Seed)
					}
				}
			}
			t.Logf("%s: %d of %d scenes break an invariant (seeds %v)", r.name, caught, *rates, seeds)
		})
	}
}
