package main

import (
	"fmt"
	"strings"

	"stampede/checker"
	"stampede/checker/check"
)

// usage returns the help for the lab's cases: the lists of the cases that
// draw a timeline, play explorer scenes as stories and play on Redis are
// written from the registry.
func usage(cases []check.Case) string {
	lanes := checker.Numbers(cases, func(c check.Case) bool { return c.Timeline == check.VisitorLanes })
	scenes := checker.Numbers(cases, func(c check.Case) bool { return c.Timeline != check.NoTimeline })
	return strings.NewReplacer(
		"{{lanes}}", checker.Said(lanes),
		"{{scenes}}", checker.Said(scenes),
		"{{redis}}", checker.Said(checker.Numbers(cases, checker.OnRedis)),
	).Replace(usageText)
}

// isHelp reports whether a is a request for help.
func isHelp(a string) bool { return a == "-h" || a == "-help" || a == "--help" }

// commandHelp returns one command's part of the help, when args ask for
// it: `check -h`, `grade --help`, `check 1 --help`. `run N -h` is not
// one: after a case number, -h asks the story for its own flags.
func commandHelp(args []string) (string, bool) {
	if len(args) < 2 {
		return "", false
	}
	cmd, rest := args[0], args[1:]
	asked := false
	for i, a := range rest {
		if isHelp(a) {
			asked = true
			break
		}
		if cmd == "run" && i == 0 {
			break
		}
	}
	if !asked {
		return "", false
	}
	var b strings.Builder
	in := false
	for _, line := range strings.Split(usage(checker.Cases()), "\n") {
		top := strings.HasPrefix(line, "  ") && !strings.HasPrefix(line, "   ")
		switch {
		case top && (strings.HasPrefix(line, "  "+cmd+" ") || line == "  "+cmd):
			in = true
			fields := strings.SplitN(strings.TrimSpace(line), "  ", 2)
			fmt.Fprintf(&b, "usage: go run ./shop %s\n", fields[0])
			if len(fields) == 2 {
				fmt.Fprintf(&b, "  %s\n", strings.TrimSpace(fields[1]))
			}
		case in && strings.HasPrefix(line, "    "):
			fmt.Fprintln(&b, line)
		case in:
			return b.String(), true
		}
	}
	if in {
		return b.String(), true
	}
	return "", false
}
