package library

var _ = register(5,
	entry{dir: "shipped", fails: []string{"returns", "shared-error", "not-cached", "panic", "give-up", "starter-gives-up", "explore"}},
	entry{dir: "wrong/deferunlock", fails: []string{"shared-error", "give-up", "starter-gives-up", "explore"}},
	entry{dir: "wrong/cachesfailure", fails: []string{"not-cached", "explore"}},
	entry{dir: "wrong/retryeach", fails: []string{"shared-error", "explore"}},
	entry{dir: "wrong/waitersignorectx", fails: []string{"give-up", "explore"}},
	entry{dir: "wrong/starterctx", fails: []string{"starter-gives-up", "explore"}},
	entry{dir: "wrong/nodeferpanic", fails: []string{"panic", "explore"}},
	entry{dir: "wrong/dochanpanic", fails: []string{"panic", "explore"}},
	entry{dir: "wrong/deferorder", fails: []string{"race"}, maybe: map[string]string{
		"panic":   "a waiter may read the flight before the recover writes its error, or after",
		"explore": "the same, in the scenes where a query panics",
	}},
	entry{dir: "wrong/explore-nocache", fails: []string{"explore"}},
	entry{dir: "wrong/explore-canceledonly", fails: []string{"explore"}},
	entry{dir: "wrong/explore-starterforgets", fails: []string{"explore"}},
	entry{dir: "wrong/explore-staleflight", fails: []string{"explore"}},
	entry{dir: "right/perkey"},
	entry{dir: "right/singleflight"},
	entry{dir: "right/donechan"},
	entry{dir: "right/syncmap"},
)
