package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"stampede/checker"
)

func listCmd(_ context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("list", flag.ContinueOnError)
	rest, err := parse(fs, args, false)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usagef("list takes no arguments")
	}
	for _, c := range checker.Cases() {
		fmt.Fprintf(stdout, "%2d  %-32s %s\n", c.Number, c.Title, c.Summary)
	}
	return nil
}
