package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"stampede/checker"
	"stampede/checker/check"
)

func TestClassTableShowsPointsAndProgress(t *testing.T) {
	class := Class{
		Cases:     []ClassCase{{1, "one", 10}, {4, "four", 15}},
		MaxPoints: 25,
		Submissions: []Document{
			{
				Meta: Meta{Student: Person{Name: "alice"}, Submission: Submission{Dir: "subs/alice"}},
				Cases: []CaseReport{
					{Case: 1, Status: CasePass, Compiles: true, Score: Score{Passed: 5, Points: 10}, Checks: make([]check.Result, 5)},
					{Case: 4, Status: CaseFail, Compiles: true, Score: Score{Passed: 3}, Checks: make([]check.Result, 5)},
				},
				Score: Score{Points: 10, MaxPoints: 25},
			},
			{
				Meta: Meta{Student: Person{Name: "Bob B"}, Submission: Submission{Dir: "subs/bob"}},
				Cases: []CaseReport{
					{Case: 1, Status: CaseFail, Compiles: false, Checks: make([]check.Result, 5)},
					{Case: 4, Status: CaseIncomplete, Compiles: true, Score: Score{Passed: 4}, Checks: make([]check.Result, 5)},
				},
				Score: Score{MaxPoints: 25},
			},
		},
	}
	var out bytes.Buffer
	printClass(&out, class)
	assert.Equal(t, ""+
		"submission  student  case 1 /10   case 4 /15   points\n"+
		"subs/alice  alice    10           0 (3/5)      10/25\n"+
		"subs/bob    Bob B    0 (no build) ? (no race)  0/25\n"+
		allOrNothing+"\n",
		out.String())
}

// TestGradeTwoSubmissions grades two students' clones with this lab's
// checker: one as shipped, one solved, each isolated in its own build.
func TestGradeTwoSubmissions(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the worker")
	}
	alice := submissionDir(t, "alice", fromShipped, 1)
	bob := submissionDir(t, "bob", fromSolution, 1)
	if _, err := exec.LookPath("git"); err == nil {
		for _, args := range [][]string{
			{"init", "-q"}, {"add", "."},
			{"-c", "user.name=Bob Student", "-c", "user.email=bob@example.org", "commit", "-qm", "case 1"},
		} {
			cmd := exec.Command("git", args...)
			cmd.Dir = bob
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, string(out))
		}
	}
	outDir := t.TempDir()
	csvPath, jsonPath := filepath.Join(outDir, "g.csv"), filepath.Join(outDir, "g.json")
	code, out, stderr := runShop(t, "grade", alice, bob, "--only", "1", "--repeat", "1", "--csv", csvPath, "--json", jsonPath)
	require.Equal(t, exitPass, code, stderr)

	// Progress is plain lines off a terminal, one as each grade ends.
	assert.Regexp(t, `\[[12]/2\] `+regexp.QuoteMeta(alice)+`: case 1 \([0-9.]+m?s\)`, stderr)
	assert.Regexp(t, `\[[12]/2\] `+regexp.QuoteMeta(bob)+`: case 1 \([0-9.]+m?s\)`, stderr)
	assert.Contains(t, stderr, "estimate: about ")
	lines := strings.Split(out, "\n")
	require.GreaterOrEqual(t, len(lines), 3, out)
	p := points(1)
	assert.Regexp(t, fmt.Sprintf(`^submission +student +case 1 /%d +points$`, p), lines[0])
	c, _ := checker.Find(1)
	all := len(c.Checks)
	// As shipped, case 1 passes all but the stampede's checks and the explorers'.
	assert.Regexp(t, fmt.Sprintf(`alice +0 \(%d/%d\) +0/%d$`, all-4, all, p), lines[1])
	assert.Regexp(t, fmt.Sprintf(`Bob Student +%d +%d/%d$`, p, p, p), lines[2])

	data, err := os.ReadFile(csvPath)
	require.NoError(t, err)
	rows, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	require.NoError(t, err)
	require.Len(t, rows, 3)
	assert.Equal(t, []string{"student", "email", "source", "submission", "commit", "modified",
		"case1_points", "case1_status", "case1_checks", "case1_failed", "case1_compile_errors",
		"points", "max_points", "cases_passed", "lab_commit", "graded_at"}, rows[0])
	assert.Equal(t, []string{"alice", "", "folder name", alice, "", "", "0", "fail", fmt.Sprintf("%d/%d", all-4, all),
		"once two-shelves explore switches", "", "0", strconv.Itoa(p), "0"}, rows[1][:14])
	assert.Equal(t, []string{"Bob Student", "bob@example.org", "last commit", bob}, rows[2][:4])
	assert.Len(t, rows[2][4], 40, "bob's commit")
	assert.Equal(t, []string{"false", strconv.Itoa(p), "pass", fmt.Sprintf("%d/%d", all, all), "", "", strconv.Itoa(p), strconv.Itoa(p), "1"}, rows[2][5:14])

	data, err = os.ReadFile(jsonPath)
	require.NoError(t, err)
	var class Class
	require.NoError(t, json.Unmarshal(data, &class))
	assert.Equal(t, ClassSchema, class.Schema)
	require.Len(t, class.Submissions, 2)
	assert.Equal(t, 0, class.Submissions[0].Score.Points)
	assert.Equal(t, p, class.Submissions[1].Score.Points)
	assert.Equal(t, "once", class.Submissions[0].Cases[0].Checks[1].ID)
}

func TestGradeRefusesTheLabsOwnFolder(t *testing.T) {
	root, err := moduleRoot()
	require.NoError(t, err)
	code, _, stderr := runShop(t, "grade", root)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "this lab's own folder")
	code, _, stderr = runShop(t, "grade", t.TempDir())
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "holds no cases/ folder")
}

func TestASubmissionIsACloneOrItsCasesFolder(t *testing.T) {
	root, err := moduleRoot()
	require.NoError(t, err)
	sub := submissionDir(t, "dana", fromShipped, 2)

	s, err := resolveSubmission(root, sub)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(sub, "cases"), s.cases, "a clone: its cases/")
	s, err = resolveSubmission(root, filepath.Join(sub, "cases"))
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(sub, "cases"), s.cases, "the cases/ folder itself")
	s, err = resolveSubmission(root, root)
	require.NoError(t, err)
	assert.Empty(t, s.cases, "the lab's own folder, named the long way")
	_, err = resolveSubmission(root, filepath.Join(sub, "nowhere"))
	assert.Error(t, err)
}

// TestGradesAreWrittenWhereGitIgnoresThem: grade's summaries go beside
// go.mod by default, and git ignores them there, so that a grader's
// checkout stays clean (and lab.modified false).
func TestGradesAreWrittenWhereGitIgnoresThem(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	root, err := moduleRoot()
	require.NoError(t, err)
	for _, name := range []string{gradesCSV, gradesJSON} {
		cmd := exec.Command("git", "check-ignore", "-q", name)
		cmd.Dir = root
		assert.NoError(t, cmd.Run(), "git ignores %s", name)
	}
}

// TestInstructorsGuideKeepsUpWithTheLab: the guide's session plan has a
// row for every case and for compare, and it states the rule of points in
// the words the tables end with.
func TestInstructorsGuideKeepsUpWithTheLab(t *testing.T) {
	root, err := moduleRoot()
	require.NoError(t, err)
	data, err := os.ReadFile(filepath.Join(root, "docs", "instructors.md"))
	require.NoError(t, err)
	guide := string(data)
	plan := guide[strings.Index(guide, "## A plan for the sessions"):]
	plan = plan[:strings.Index(plan, "\n## ")]
	for _, c := range checker.Cases() {
		assert.Regexp(t, fmt.Sprintf(`(?m)^\| %d \| `, c.Number), plan, "the session plan has case %d", c.Number)
	}
	assert.Regexp(t, `(?m)^\| compare \| `, plan)
	assert.Contains(t, strings.Join(strings.Fields(guide), " "), allOrNothing)
}
