package main

import (
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
