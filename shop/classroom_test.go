package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"stampede/checker"
)

// classroomWorkflow is where GitHub Classroom reads the autograding tests.
const classroomWorkflow = ".github/workflows/classroom.yml"

// autogradingTest is one step of the workflow that uses the command grader.
type autogradingTest struct {
	id, name, command string
	timeout, maxScore int
}

// readWorkflow reads the command-grader steps and the reporter's runners
// from the workflow. The file is simple YAML written for this lab; reading
// the few keys by line keeps the lab free of a YAML dependency.
func readWorkflow(t *testing.T, path string) (tests []autogradingTest, runners []string, env map[string]string) {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	env = map[string]string{}
	var cur *autogradingTest
	inEnv := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		key, val, _ := strings.Cut(strings.TrimPrefix(line, "- "), ":")
		val = strings.TrimSpace(val)
		if strings.HasPrefix(line, "- name:") {
			inEnv = false
			if cur != nil {
				tests = append(tests, *cur)
				cur = nil
			}
		}
		switch key {
		case "id":
			cur = &autogradingTest{id: val}
		case "test-name":
			cur.name = val
		case "command":
			cur.command = val
		case "timeout":
			cur.timeout, _ = strconv.Atoi(val)
		case "max-score":
			cur.maxScore, _ = strconv.Atoi(val)
		case "runners":
			runners = strings.Split(val, ",")
		case "env":
			inEnv = true
		default:
			if inEnv && strings.HasSuffix(key, "_RESULTS") {
				env[key] = strings.Trim(val, `"`)
			}
		}
	}
	require.NoError(t, sc.Err())
	return tests, runners, env
}

// TestClassroomWorkflowHasATestPerCaseWorthItsPoints keeps the workflow in
// step with the lab's cases and casePoints.
func TestClassroomWorkflowHasATestPerCaseWorthItsPoints(t *testing.T) {
	root, err := moduleRoot()
	require.NoError(t, err)
	tests, runners, env := readWorkflow(t, filepath.Join(root, classroomWorkflow))
	require.Len(t, tests, len(checker.Cases()), "one autograding test per case")
	total := 0
	for i, c := range checker.Cases() {
		at := tests[i]
		id := fmt.Sprintf("case-%d", c.Number)
		assert.Equal(t, id, at.id)
		assert.Equal(t, fmt.Sprintf("case %d", c.Number), at.name)
		assert.Equal(t, fmt.Sprintf("cd lab && go run ./shop check %d --cases ../submission --repeat 5", c.Number), at.command)
		assert.Equal(t, casePoints[c.Number], at.maxScore, "case %d's max-score is its weight", c.Number)
		assert.Positive(t, at.timeout)
		assert.Contains(t, runners, id, "the reporter reads case %d", c.Number)
		assert.Equal(t, "${{steps."+id+".outputs.result}}", env[strings.ToUpper(id)+"_RESULTS"])
		total += at.maxScore
	}
	assert.Equal(t, maxPoints(), total)
}

// shopArgs turns a workflow command into the shop's arguments, with the
// submission's folder where the workflow checks it out.
func shopArgs(t *testing.T, command, submission string) []string {
	t.Helper()
	_, after, ok := strings.Cut(command, "go run ./shop ")
	require.True(t, ok, command)
	args := strings.Fields(after)
	for i, a := range args {
		if a == "../submission" {
			args[i] = submission
		}
	}
	return args
}

// TestClassroomCommandsScoreNothingAsShippedAndFullOnTheSolution runs case
// 1's autograding command as the workflow does, on a fresh clone's case 1
// and on a solved one: the command grader gives the points on exit 0 only.
func TestClassroomCommandsScoreNothingAsShippedAndFullOnTheSolution(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the worker")
	}
	root, err := moduleRoot()
	require.NoError(t, err)
	tests, _, _ := readWorkflow(t, filepath.Join(root, classroomWorkflow))
	require.NotEmpty(t, tests)

	code, out, _ := runShop(t, shopArgs(t, tests[0].command, submissionDir(t, "fresh", fromShipped, 1))...)
	assert.Equal(t, exitFail, code, out)
	code, out, _ = runShop(t, shopArgs(t, tests[0].command, submissionDir(t, "solved", fromSolution, 1))...)
	assert.Equal(t, exitPass, code, out)
}

// TestAFreshCloneScoresZero grades every case as the lab ships it: each
// passes some checks on the way, and none is worth a point.
func TestAFreshCloneScoresZero(t *testing.T) {
	if testing.Short() {
		t.Skip("builds every case's worker")
	}
	fresh := submissionDir(t, "fresh", fromShipped)
	code, out, stderr := runShop(t, "check", "all", "--cases", fresh, "--repeat", "1", "--json")
	assert.Equal(t, exitFail, code, stderr)
	var doc Document
	require.NoError(t, json.Unmarshal([]byte(out), &doc), out)
	require.Len(t, doc.Cases, len(checker.Cases()))
	for _, c := range doc.Cases {
		assert.Equal(t, CaseFail, c.Status, "case %d as shipped", c.Case)
		assert.Equal(t, 0, c.Score.Points, "case %d as shipped", c.Case)
	}
	assert.Equal(t, 0, doc.Score.Points)
	assert.Equal(t, 100, doc.Score.MaxPoints)
}
