package main

import (
	"fmt"
	"strings"

	"stampede/checker"
	"stampede/checker/check"
)

// classroomMark is the line of .github/workflows/classroom.yml after which
// the workflow is written from the registry: one autograding test per case,
// worth its points, and the reporter that adds them up.
const classroomMark = "      # The steps below are written from the registry, checker.Cases " +
	"(go test ./shop -run TestClassroomWorkflowIsWrittenFromTheRegistry -update)."

// classroomTests returns the workflow's steps after classroomMark for the
// cases: a command-grader test per case, then the reporter.
func classroomTests(cases []check.Case) string {
	var b strings.Builder
	pts := checker.Points(cases)
	var ids []string
	for _, c := range cases {
		id := fmt.Sprintf("case-%d", c.Number)
		ids = append(ids, id)
		fmt.Fprintf(&b, `      - name: case %[1]d
        id: %[2]s
        uses: %[3]s
        with:
          test-name: case %[1]d
          command: cd lab && GITHUB_ACTOR='${{ github.actor }}' go run ./shop check %[1]d --cases ../submission --repeat 5
          timeout: %[4]d
          max-score: %[5]d
`, c.Number, id, commandGrader, classroomMinutes, pts[c.Number])
	}
	b.WriteString("      - name: Autograding Reporter\n        uses: classroom-resources/autograding-grading-reporter@v1\n        env:\n")
	for _, id := range ids {
		fmt.Fprintf(&b, "          %s_RESULTS: \"${{steps.%s.outputs.result}}\"\n", strings.ToUpper(id), id)
	}
	fmt.Fprintf(&b, "        with:\n          runners: %s\n", strings.Join(ids, ","))
	return b.String()
}

// commandGrader is the action that runs one autograding test.
const commandGrader = "classroom-resources/autograding-command-grader@v1"

// classroomMinutes is each test's timeout: a case's checks take seconds
// once the lab is compiled (setup compiles it before the first test), so
// this is only the bound on a submission that hangs the runner.
const classroomMinutes = 15
