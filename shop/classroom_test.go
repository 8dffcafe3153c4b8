package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"stampede/checker"
	"stampede/checker/check"
)

// classroomWorkflow is where GitHub Classroom reads the autograding tests.
const classroomWorkflow = ".github/workflows/classroom.yml"

// workflowStep is one step of the workflow, as GitHub Actions reads it.
type workflowStep struct {
	Name            string            `yaml:"name"`
	ID              string            `yaml:"id"`
	If              string            `yaml:"if"`
	Uses            string            `yaml:"uses"`
	Run             string            `yaml:"run"`
	ContinueOnError bool              `yaml:"continue-on-error"`
	With            map[string]string `yaml:"with"`
	Env             map[string]string `yaml:"env"`
}

// workflowSteps reads the steps of the workflow's one job.
func workflowSteps(t *testing.T, path string) []workflowStep {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var wf struct {
		Jobs map[string]struct {
			Steps []workflowStep `yaml:"steps"`
		} `yaml:"jobs"`
	}
	require.NoError(t, yaml.Unmarshal(data, &wf))
	require.Len(t, wf.Jobs, 1, "one job")
	for _, job := range wf.Jobs {
		return job.Steps
	}
	return nil
}

// autogradingTest is one step of the workflow that uses the command grader.
type autogradingTest struct {
	id, name, command string
	timeout, maxScore int
}

// readWorkflow reads the command-grader steps and the reporter's runners
// and environment from the workflow.
func readWorkflow(t *testing.T, path string) (tests []autogradingTest, runners []string, env map[string]string) {
	t.Helper()
	for _, st := range workflowSteps(t, path) {
		switch {
		case st.Uses == commandGrader:
			at := autogradingTest{id: st.ID, name: st.With["test-name"], command: st.With["command"]}
			at.timeout, _ = strconv.Atoi(st.With["timeout"])
			at.maxScore, _ = strconv.Atoi(st.With["max-score"])
			tests = append(tests, at)
		case strings.HasPrefix(st.Uses, "classroom-resources/autograding-grading-reporter@"):
			runners = strings.Split(st.With["runners"], ",")
			env = st.Env
		}
	}
	return tests, runners, env
}

// TestClassroomWorkflowIsWrittenFromTheRegistry: the workflow's tests, one
// per case worth its points, are the registry's; with -update the test
// writes them. A case added to the registry gets its test.
func TestClassroomWorkflowIsWrittenFromTheRegistry(t *testing.T) {
	root, err := moduleRoot()
	require.NoError(t, err)
	path := filepath.Join(root, classroomWorkflow)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	head, _, ok := strings.Cut(string(data), classroomMark+"\n")
	require.True(t, ok, "the workflow marks where the registry's part begins")
	want := head + classroomMark + "\n" + classroomTests(checker.Cases())
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(want), 0o644))
	} else {
		assert.Equal(t, want, string(data), "the workflow is out of step with the registry: go test ./shop -run %s -update", t.Name())
	}

	eleven := append(checker.Cases(), check.Case{Number: 11, Points: 10})
	assert.Contains(t, classroomTests(eleven), "go run ./shop check 11 --cases ../submission")
	assert.Contains(t, classroomTests(eleven), "case-10,case-11")
}

// TestClassroomWorkflowHasATestPerCaseWorthItsPoints reads the workflow as
// GitHub Actions does: a test per case, worth its points.
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
		assert.Equal(t, fmt.Sprintf("cd lab && GITHUB_ACTOR='${{ github.actor }}' go run ./shop check %d --cases ../submission --repeat 5", c.Number), at.command)
		assert.Equal(t, points(c.Number), at.maxScore, "case %d's max-score is its weight", c.Number)
		assert.Positive(t, at.timeout)
		assert.Contains(t, runners, id, "the reporter reads case %d", c.Number)
		assert.Equal(t, "${{steps."+id+".outputs.result}}", env[strings.ToUpper(id)+"_RESULTS"])
		total += at.maxScore
	}
	assert.Equal(t, maxPoints(), total)
}

// TestClassroomWorkflowFetchesTheLabOrSaysWhy holds the steps that fetch
// the lab: with the secret for a private lab, falling back to the job's own
// token, and, when the fetch fails, one line that says why before any case
// is graded (the steps after it run only while every step before passed).
func TestClassroomWorkflowFetchesTheLabOrSaysWhy(t *testing.T) {
	root, err := moduleRoot()
	require.NoError(t, err)
	steps := workflowSteps(t, filepath.Join(root, classroomWorkflow))
	i := slices.IndexFunc(steps, func(s workflowStep) bool { return s.With["path"] == "lab" })
	require.GreaterOrEqual(t, i, 0, "a step checks out the lab as lab/")
	lab := steps[i]
	assert.Equal(t, "${{ vars.STAMPEDE_LAB || github.repository }}", lab.With["repository"])
	assert.Equal(t, "${{ secrets.STAMPEDE_LAB_TOKEN || github.token }}", lab.With["token"], "a private lab's token, else the job's")
	assert.True(t, lab.ContinueOnError, "the next step says why it failed")
	require.Greater(t, len(steps), i+1)
	why := steps[i+1]
	assert.Equal(t, "steps."+lab.ID+".outcome != 'success'", why.If)
	for _, st := range steps[i+2:] {
		assert.Empty(t, st.If, "%s must not run after the lab could not be fetched", st.Name)
	}

	// The step's script, run as the runner would, says it in one line.
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	for _, hasToken := range []string{"false", "true"} {
		cmd := exec.Command("sh", "-c", why.Run)
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "LAB=teacher/stampede-lab", "HAS_TOKEN=" + hasToken}
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		require.ErrorAs(t, err, &exit, string(out))
		assert.Equal(t, 1, exit.ExitCode())
		assert.Equal(t, 1, strings.Count(string(out), "\n"), "one line: %q", out)
		assert.True(t, strings.HasPrefix(string(out), "::error "), "an error annotation: %q", out)
		assert.Contains(t, string(out), "teacher/stampede-lab")
		assert.Contains(t, string(out), "STAMPEDE_LAB_TOKEN")
	}
}

// graderEnv is the whole environment the command grader gives a test's
// command (classroom-resources/autograding-command-grader's index.js).
func graderEnv() []string {
	return []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"),
		"FORCE_COLOR=true", "DOTNET_CLI_HOME=/tmp", "DOTNET_NOLOGO=true",
	}
}

// goEnv is what go env says of one setting.
func goEnv(t *testing.T, name string) string {
	t.Helper()
	out, err := exec.Command("go", "env", name).Output()
	require.NoError(t, err)
	return strings.TrimSpace(string(out))
}

// expand puts a run's values in place of the workflow's expressions, and
// fails on one it does not know.
func expand(t *testing.T, s string, values map[string]string) string {
	t.Helper()
	for expr, v := range values {
		s = strings.ReplaceAll(s, "${{ "+expr+" }}", v)
	}
	require.NotContains(t, s, "${{", "an expression the dry run does not know")
	return s
}

// TestClassroomWorkflowDryRun plays the workflow's steps here, as far as
// they can run off GitHub: the submission and the lab side by side, the
// lab's setup step, and case 1's autograding command with only the
// environment the command grader passes, on a fresh clone's case 1 and on
// a solved one. The grader gives the points on exit 0 only, and the
// report names the student who pushed.
func TestClassroomWorkflowDryRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go run ./shop and builds the worker")
	}
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	root, err := moduleRoot()
	require.NoError(t, err)
	steps := workflowSteps(t, filepath.Join(root, classroomWorkflow))
	values := map[string]string{"github.actor": "ada-l"}

	// The checkouts: lab/ is this lab (linked, so nothing is compiled
	// anew), submission/ a student's repository.
	ws := t.TempDir()
	require.NoError(t, os.Symlink(root, filepath.Join(ws, "lab")))
	sh := func(script string, env []string) (code int, stdout, stderr string) {
		t.Helper()
		var out, errb bytes.Buffer
		cmd := exec.Command("sh", "-c", script)
		cmd.Dir = ws
		cmd.Env = env
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return exit.ExitCode(), out.String(), errb.String()
		}
		require.NoError(t, err, errb.String())
		return 0, out.String(), errb.String()
	}
	var setup, case1 *workflowStep
	for i, st := range steps {
		switch {
		case st.Run != "" && strings.Contains(st.Run, "go run ./shop setup"):
			setup = &steps[i]
		case st.Uses == commandGrader && st.ID == "case-1":
			case1 = &steps[i]
		}
	}
	require.NotNil(t, setup, "a step compiles the lab first")
	require.NotNil(t, case1)
	code, out, stderr := sh(expand(t, setup.Run, values), append(os.Environ(), "GOFLAGS=-trimpath "+goEnv(t, "GOFLAGS")))
	require.Equal(t, 0, code, out+stderr)

	command := expand(t, case1.With["command"], values)
	for _, tc := range []struct {
		name string
		from func(*testing.T, string, check.Case) files
		want int
	}{
		{"fresh", fromShipped, exitFail},
		{"solved", fromSolution, exitPass},
	} {
		sub := filepath.Join(ws, "submission")
		require.NoError(t, os.RemoveAll(sub))
		require.NoError(t, os.Rename(submissionDir(t, tc.name, tc.from, 1), sub))
		// --json, so that the test can read whom the report names.
		// The lab is seen through a link from a new folder each run: with
		// -trimpath, go run finds it compiled rather than compiling it
		// anew under that folder's name. The command sees nothing else.
		env := append(graderEnv(), "GOFLAGS=-trimpath "+goEnv(t, "GOFLAGS"))
		code, out, stderr := sh(command+" --json", env)
		// (go run exits 1 for any status of the command's but 0.)
		require.Equal(t, tc.want, code, "%s: %s\n%s", tc.name, command, stderr)
		var doc Document
		require.NoError(t, json.Unmarshal([]byte(out), &doc), out)
		assert.Equal(t, Person{Name: "ada-l", Source: "GITHUB_ACTOR"}, doc.Student, "the student who pushed")
	}
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
