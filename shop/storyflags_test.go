package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"stampede/checker"
	"stampede/checker/case01"
	"stampede/checker/case02"
	"stampede/checker/case03"
	"stampede/checker/case04"
	"stampede/checker/case05"
	"stampede/checker/case06"
	"stampede/checker/case07"
	"stampede/checker/case08"
	"stampede/checker/case09"
	"stampede/checker/case10"
	"stampede/checker/case11"
	"stampede/checker/check"
	"stampede/checker/harness"
	sol01 "stampede/solutions/case01"
	sol02 "stampede/solutions/case02"
	sol03 "stampede/solutions/case03"
	sol04 "stampede/solutions/case04"
	sol05 "stampede/solutions/case05"
	sol06 "stampede/solutions/case06"
	sol07 "stampede/solutions/case07"
	sol08 "stampede/solutions/case08"
	sol09 "stampede/solutions/case09"
	sol10 "stampede/solutions/case10"
	sol11 "stampede/solutions/case11"
)

// stories binds each case's story to its reference solution, as the worker
// does; only their flags are read here (-h plays nothing).
var stories = map[int]harness.Bound{
	1: case01.Bind(sol01.New), 2: case02.Bind(sol02.New), 3: case03.Bind(sol03.New),
	4: case04.Bind(sol04.New), 5: case05.Bind(sol05.New), 6: case06.Bind(sol06.New),
	7: case07.Bind(sol07.New), 8: case08.Bind(sol08.New), 9: case09.Bind(sol09.New),
	10: case10.Bind(sol10.New), 11: case11.Bind(sol11.New),
}

// storyFlags returns the flags case n's story takes, each with its usage
// line, from the story's own -h.
func storyFlags(t *testing.T, n int) map[string]string {
	t.Helper()
	b, ok := stories[n]
	require.True(t, ok, "case %d's story is bound here", n)
	var out bytes.Buffer
	err := b.Scenario(context.Background(), &out, []string{"-h"})
	require.ErrorIs(t, err, harness.ErrHelpShown, "case %d: every story parses its flags with harness.ParseFlags, so -h is its flags and a typo one line", n)
	flags := map[string]string{}
	name := ""
	for _, line := range strings.Split(out.String(), "\n") {
		if f, ok := strings.CutPrefix(strings.TrimSpace(line), "-"); ok && f != "" {
			name = strings.Fields(f)[0]
			flags[name] = ""
			continue
		}
		if name != "" {
			flags[name] += strings.TrimSpace(line) + " "
		}
	}
	return flags
}

// TestTimelinesMatchTheStories holds `run`'s table of what --timeline
// draws in step with each story's flags: a story with no --timeline is
// refused it, one whose --timeline needs --seed is refused it without.
func TestTimelinesMatchTheStories(t *testing.T) {
	require.Len(t, stories, len(checker.Cases()))
	for _, c := range checker.Cases() {
		flags := storyFlags(t, c.Number)
		usage, has := flags["timeline"]
		switch c.Timeline {
		case check.NoTimeline:
			assert.False(t, has, "case %d's story takes --timeline: say what it draws in its Case's Timeline", c.Number)
		case check.SceneEvents:
			assert.True(t, has, "case %d", c.Number)
			assert.Contains(t, usage, "with --seed", "case %d's --timeline draws only an explorer's scene", c.Number)
		case check.VisitorLanes:
			assert.True(t, has, "case %d", c.Number)
			assert.NotContains(t, usage, "with --seed", "case %d's --timeline draws the story", c.Number)
		}
		_, redis := flags["redis"]
		assert.Equal(t, c.Redis, redis, "case %d's story takes --redis if and only if the case uses Redis", c.Number)
	}
}

// TestRunRefusesATimelineItWouldNotDraw: --timeline means the same for
// every case or is refused in one line, before anything is built.
func TestRunRefusesATimelineItWouldNotDraw(t *testing.T) {
	for _, args := range [][]string{
		{"run", "7", "--timeline"},
		{"run", "4", "--timeline"},
		{"run", "9", "--timeline", "--visitors", "3"},
	} {
		code, _, stderr := runShop(t, args...)
		assert.Equal(t, exitUsage, code, "shop %v", args)
		assert.Equal(t, 1, strings.Count(stderr, "\n"), "shop %v: %q", args, stderr)
		assert.Contains(t, stderr, "shop: run "+args[1], "shop %v", args)
	}
	story, err := timelineArgs(mustCase(t, 4), []string{"--seed", "12"})
	require.NoError(t, err)
	assert.Equal(t, []string{"--seed", "12", "--timeline"}, story, "with --seed, case 4 draws the scene")
	story, err = timelineArgs(mustCase(t, 1), nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"--timeline"}, story)
}

// TestRedisIsProbedOnlyForTheCasesOnRedis: a server named for a case that
// uses no Redis is ignored with a note, never probed; one named for a
// Redis case, by --redis or $REDIS_URL, must answer or be one plain line.
func TestRedisIsProbedOnlyForTheCasesOnRedis(t *testing.T) {
	ctx := context.Background()
	t.Setenv(redisVar, "")
	// Port 1 on the loopback: nothing listens, so the dial is refused at once.
	const nowhere = "redis://127.0.0.1:1/0"
	url, note, err := redisServer(ctx, casesOf(t, 1), nowhere)
	require.NoError(t, err)
	assert.Empty(t, url)
	assert.Equal(t, "note: case 1 uses no Redis, so --redis is ignored", note)

	_, _, err = redisServer(ctx, casesOf(t, 1, 6), nowhere)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "cannot reach Redis at 127.0.0.1:1 (--redis)")

	t.Setenv(redisVar, nowhere)
	_, note, err = redisServer(ctx, casesOf(t, 2), "")
	assert.NoError(t, err, "the environment's server, for cases that use none, is not a mistake")
	assert.Empty(t, note)
	_, _, err = redisServer(ctx, casesOf(t, 8), "")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "($REDIS_URL)")

	code, _, stderr := runShop(t, "run", "6", "--redis", "unreachable")
	assert.Equal(t, exitUsage, code)
	assert.Equal(t, "shop: --redis unreachable is not a Redis URL: give redis://HOST:PORT/DB, such as redis://localhost:6379/0\n", stderr)
	code, _, stderr = runShop(t, "check", "1", "--redis", "unreachable", "--no-such")
	assert.Equal(t, exitUsage, code, "flags first: %s", stderr)
}

func mustCase(t *testing.T, n int) check.Case {
	t.Helper()
	c, ok := checker.Find(n)
	require.True(t, ok)
	return c
}

func casesOf(t *testing.T, numbers ...int) []check.Case {
	t.Helper()
	var cs []check.Case
	for _, n := range numbers {
		cs = append(cs, mustCase(t, n))
	}
	return cs
}

// TestHelpNamesTheCasesOfEachStoryFlag: help's lists of the cases that
// draw a timeline, and of those on Redis, are written from the registry,
// and name a case added to it.
func TestHelpNamesTheCasesOfEachStoryFlag(t *testing.T) {
	help := strings.Join(strings.Fields(usage(checker.Cases())), " ")
	assert.Contains(t, help, "draw each visitor's wait (cases 1, 2, 3, 5)")
	assert.Contains(t, help, "every event of the explorer's scene S (cases 1 to 6, 8 to 11)")
	assert.Equal(t, 2, strings.Count(help, "the Redis cases (6, 8 to 11)"), "run and check name them")
	assert.NotContains(t, help, "{{")

	twelve := check.Case{Number: 12, Redis: true, Timeline: check.SceneEvents}
	help = strings.Join(strings.Fields(usage(append(checker.Cases(), twelve))), " ")
	assert.Contains(t, help, "(cases 1 to 6, 8 to 12)")
	assert.Equal(t, 2, strings.Count(help, "the Redis cases (6, 8 to 12)"))
}

// TestTyposGetASuggestion: a mistyped command or flag is one line that
// names what was meant.
func TestTyposGetASuggestion(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"chekc", "1"}, `unknown command "chekc" (did you mean check?)`},
		{[]string{"grdae"}, `(did you mean grade?)`},
		{[]string{"check", "1", "--repat", "2"}, "unknown flag --repat (did you mean --repeat?)"},
		{[]string{"check", "1", "--soluton"}, "(did you mean --solution?)"},
		{[]string{"grade", "x", "--job", "2"}, "(did you mean --jobs?)"},
	} {
		code, _, stderr := runShop(t, tc.args...)
		assert.Equal(t, exitUsage, code, "shop %v", tc.args)
		assert.Contains(t, stderr, tc.want, "shop %v", tc.args)
		assert.Equal(t, 1, strings.Count(stderr, "\n"), "shop %v: %q", tc.args, stderr)
	}
	code, _, stderr := runShop(t, "xyzzy")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "try: go run ./shop help", "nothing close: no guess")
	assert.Equal(t, "", suggest("ab", []string{"j"}), "a guess needs more than half the letters right")
	assert.Equal(t, 1, editDistance("repaet", "repeat"), "a swap is one edit")
}

// Each command answers -h and --help with its own part of the help, as
// `go help build` does, wherever the flag stands; after run's case number,
// -h is the story's.
func TestEachCommandHasItsOwnHelp(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"check", "-h"}, "usage: go run ./shop check N | all"},
		{[]string{"check", "1", "--help"}, "--repeat K"},
		{[]string{"grade", "--help"}, "--jobs N, -j N"},
		{[]string{"grade", "a", "b", "-h"}, "usage: go run ./shop grade DIR..."},
		{[]string{"run", "--help"}, "usage: go run ./shop run N"},
		{[]string{"watch", "-help"}, "--stay"},
		{[]string{"compare", "-h"}, "--rebuild D"},
	} {
		code, stdout, stderr := runShop(t, tc.args...)
		assert.Equal(t, exitPass, code, "shop %v: %s", tc.args, stderr)
		assert.Contains(t, stdout, tc.want, "shop %v", tc.args)
		assert.NotContains(t, stdout, "hint N", "shop %v prints only its own command's help", tc.args)
	}
	code, stdout, _ := runShop(t, "run", "1", "-h")
	assert.Equal(t, exitPass, code)
	assert.Contains(t, stdout, "The story's flags", "after the case number, -h is the story's")
}
