package library

var _ = register(5,
	entry{dir: "shipped", fails: []string{"returns", "shared-error", "not-cached", "panic", "give-up", "starter-gives-up", "goexit"}},
	entry{dir: "wrong/deferunlock", fails: []string{"shared-error", "give-up", "starter-gives-up"}},
	entry{dir: "wrong/cachesfailure", fails: []string{"not-cached", "goexit"}},
	entry{dir: "wrong/retryeach", fails: []string{"shared-error"}},
	entry{dir: "wrong/waitersignorectx", fails: []string{"give-up", "goexit"}},
	entry{dir: "wrong/starterctx", fails: []string{"starter-gives-up", "goexit"}},
	entry{dir: "wrong/nodeferpanic", fails: []string{"panic", "goexit"}},
	entry{dir: "wrong/dochanpanic", fails: []string{"panic", "goexit"}},
	entry{dir: "wrong/deferorder", fails: []string{"race", "goexit"}, maybe: map[string]string{
		"panic": "a waiter may read the flight before the recover writes its error, or after",
	}},
	entry{dir: "wrong/goexitcached", fails: []string{"goexit"}},
	entry{dir: "wrong/dochangoexit", fails: []string{"goexit"}},
	entry{dir: "right/perkey"},
	entry{dir: "right/singleflight"},
	entry{dir: "right/donechan"},
	entry{dir: "right/syncmap"},
)
