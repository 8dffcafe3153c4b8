// Command student plays compare's workload through one student's case, in
// a process of its own. `shop compare --student` builds it with a
// generated file (zz_row.go, given to go build -overlay) that sets row
// from the student's cases/caseNN, runs it with a time limit, and reads
// the row's result, one JSON document, from its standard output.
//
// A process of its own because the code is a student's: a fatal error, a
// deadlock the driver cannot see, or a loop that never ends costs this
// process and its row, not the table. Built without that file it has no
// row and says so.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"

	"stampede/checker/compare"
)

// row is set by the generated file.
var row *compare.Row

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "compare student:", err)
		os.Exit(2)
	}
}

func run() error {
	wl := compare.Default()
	flag.IntVar(&wl.Servers, "servers", wl.Servers, "app servers")
	flag.IntVar(&wl.Rate, "rate", wl.Rate, "reads per second, all servers together")
	flag.DurationVar(&wl.Rebuild, "rebuild", wl.Rebuild, "how long the source query takes")
	bound := flag.Duration("bound", 5*time.Second, "how long the code may run without coming to rest")
	flag.Parse()
	wl = wl.Fit()
	if row == nil {
		return fmt.Errorf("built without a row: `go run ./shop compare --student` builds it with one")
	}
	// What the student's code prints must not mix with the result.
	out := os.Stdout
	os.Stdout = os.Stderr
	res, err := compare.Play(context.Background(), wl, *row, compare.Options{Bound: *bound})
	if err != nil {
		return err
	}
	return json.NewEncoder(out).Encode(res)
}
