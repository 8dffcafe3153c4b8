package main

import (
	"context"
	"flag"
	"fmt"
	"io"
)

// hintCmd shows a case's hints one step at a time: each call shows the
// steps seen so far and one more.
func hintCmd(_ context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("hint", flag.ContinueOnError)
	all := fs.Bool("all", false, "show every step at once")
	reset := fs.Bool("reset", false, "forget the steps seen, and start again")
	rest, err := parse(fs, args, false)
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		return usagef("hint takes one case number, such as: go run ./shop hint 1")
	}
	c, err := caseArg(rest[0])
	if err != nil {
		return err
	}
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	st, err := loadState(root)
	if err != nil {
		return err
	}
	if *reset {
		st.setShown(c.Number, 0)
		fmt.Fprintf(stdout, "Hints for case %d start again from the first.\n", c.Number)
		return st.save(root)
	}
	n := min(st.shown(c.Number)+1, len(c.Hints))
	if *all {
		n = len(c.Hints)
	}
	fmt.Fprintf(stdout, "Case %d: %s, hints %d of %d\n\n", c.Number, c.Title, n, len(c.Hints))
	for i, h := range c.Hints[:n] {
		fmt.Fprintf(stdout, "%d. %s\n\n", i+1, h)
	}
	if n < len(c.Hints) {
		dim.Fprintf(stdout, "Ask again for the next step: go run ./shop hint %d\n", c.Number)
	} else {
		dim.Fprintf(stdout, "That is every hint. Compare with the reference: go run ./shop diff %d\n", c.Number)
	}
	st.setShown(c.Number, max(n, st.shown(c.Number)))
	return st.save(root)
}
