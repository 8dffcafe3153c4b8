package explore_test

import (
	"context"
	"os"
	"strconv"
	"testing"

	"stampede/checker/check"
	"stampede/checker/explore"
	"stampede/checker/harness"
	"stampede/checker/shelves"
	"stampede/shop/catalog"

	w0 "stampede/checker/library/case01/wrong/explore-nocache"
	w1 "stampede/checker/library/case01/wrong/explore-stalecopy"
	w2 "stampede/checker/library/case02/wrong/explore-nocache"
	w3 "stampede/checker/library/case02/wrong/explore-stalecopy"
	w4 "stampede/checker/library/case03/wrong/explore-freeonleave"
	w5 "stampede/checker/library/case03/wrong/explore-keyless"
	w6 "stampede/checker/library/case03/wrong/explore-stalecopy"
	w7 "stampede/checker/library/case04/wrong/explore-stalesnapshot"
	w8 "stampede/checker/library/case05/wrong/explore-nocache"
	w9 "stampede/checker/library/case05/wrong/explore-canceledonly"
	w10 "stampede/checker/library/case05/wrong/explore-starterforgets"
	w11 "stampede/checker/library/case05/wrong/explore-staleflight"
)

func TestAdhoc(t *testing.T) {
	runs, _ := strconv.Atoi(os.Getenv("RUNS"))
	for _, r := range []rightAnswer{
		{1, "checker/library/case01/wrong/explore-nocache", explore.Case1, func(db *catalog.DB) shelves.Shop { return w0.New(db) }},
		{1, "checker/library/case01/wrong/explore-stalecopy", explore.Case1, func(db *catalog.DB) shelves.Shop { return w1.New(db) }},
		{2, "checker/library/case02/wrong/explore-nocache", explore.Case2, func(db *catalog.DB) shelves.Shop { return w2.New(db) }},
		{2, "checker/library/case02/wrong/explore-stalecopy", explore.Case2, func(db *catalog.DB) shelves.Shop { return w3.New(db) }},
		{3, "checker/library/case03/wrong/explore-freeonleave", explore.Case3, func(db *catalog.DB) shelves.Shop { return w4.New(db) }},
		{3, "checker/library/case03/wrong/explore-keyless", explore.Case3, func(db *catalog.DB) shelves.Shop { return w5.New(db) }},
		{3, "checker/library/case03/wrong/explore-stalecopy", explore.Case3, func(db *catalog.DB) shelves.Shop { return w6.New(db) }},
		{4, "checker/library/case04/wrong/explore-stalesnapshot", explore.Case4, func(db *catalog.DB) shelves.Shop { return w7.New(db) }},
		{5, "checker/library/case05/wrong/explore-nocache", explore.Case5, func(db *catalog.DB) shelves.Shop { return w8.New(db) }},
		{5, "checker/library/case05/wrong/explore-canceledonly", explore.Case5, func(db *catalog.DB) shelves.Shop { return w9.New(db) }},
		{5, "checker/library/case05/wrong/explore-starterforgets", explore.Case5, func(db *catalog.DB) shelves.Shop { return w10.New(db) }},
		{5, "checker/library/case05/wrong/explore-staleflight", explore.Case5, func(db *catalog.DB) shelves.Shop { return w11.New(db) }},
	} {
		h := harness.New(context.Background(), check.Module+"/"+r.pkg, harness.DefaultBound)
		caught := 0
		var last string
		for range runs {
			v := explore.Run(h, r.newShop, r.profile, 0, 300)
			if !v.Pass {
				caught++
				last = v.Figure + ": " + v.Message
			}
		}
		t.Logf("%s: caught %d/%d\n   %s", r.pkg, caught, runs, last)
	}
}
