package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"

	"stampede/checker/check"
)

// The flags that `run` offers for every case mean the same in each, or are
// refused with one line: a flag a story would ignore is a flag that lies.

// timelineArgs checks --timeline for case c's story, whose other flags are
// args, and returns the story's flags with it.
func timelineArgs(c check.Case, args []string) ([]string, error) {
	switch c.Timeline {
	case check.VisitorLanes:
	case check.SceneEvents:
		if !hasFlag(args, "seed") {
			return nil, usagef("run %d --timeline: case %d's story draws no timeline of its own; "+
				"--timeline prints every event of an explorer's scene, with --seed S (a failed check names S)",
				c.Number, c.Number)
		}
	default:
		return nil, usagef("run %d takes no --timeline: its story always draws when each recompute started "+
			"and the reads that waited", c.Number)
	}
	return append(slices.Clone(args), "--timeline"), nil
}

// hasFlag reports whether args set the flag name (-name, --name, --name=v).
func hasFlag(args []string, name string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		n, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.HasPrefix(a, "-") && n == name {
			return true
		}
	}
	return false
}

// redisVar is the environment variable the Redis cases read for a real
// server (their checker's URLVar); --redis sets it for the checks.
const redisVar = "REDIS_URL"

// redisServer decides which Redis server the cases to run will use: the one
// --redis names, else $REDIS_URL, else the embedded one (""). It makes sure
// that server answers, once, when one of the cases uses Redis, and returns
// a note to print when a server was named for cases that use none.
func redisServer(ctx context.Context, cases []check.Case, flagURL string) (url, note string, err error) {
	url, from := flagURL, "--redis"
	if url == "" {
		url, from = os.Getenv(redisVar), "$"+redisVar
	}
	if url == "" {
		return "", "", nil
	}
	var onRedis []string
	for _, c := range cases {
		if c.Redis {
			onRedis = append(onRedis, fmt.Sprint(c.Number))
		}
	}
	if len(onRedis) == 0 {
		if flagURL == "" {
			return "", "", nil // the environment's, for other commands
		}
		what := "case " + fmt.Sprint(cases[0].Number) + " uses"
		if len(cases) > 1 {
			what = "these cases use"
		}
		return "", fmt.Sprintf("note: %s no Redis, so --redis is ignored", what), nil
	}
	if err := probeRedis(ctx, url, from); err != nil {
		return "", "", err
	}
	return url, "", nil
}
