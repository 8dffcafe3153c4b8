package main

import (
	"context"
	"encoding/csv"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"stampede/checker"
	"stampede/checker/check"
	"stampede/checker/grade"
)

// ClassSchema names the format of `grade`'s JSON summary.
const ClassSchema = "stampede-lab/class/v1"

// Class is `grade`'s JSON summary: one Document per submission, all graded
// by the same lab.
type Class struct {
	Schema      string      `json:"schema"`
	Lab         Lab         `json:"lab"`
	GradedAt    string      `json:"graded_at"`
	Cases       []ClassCase `json:"cases"`
	MaxPoints   int         `json:"max_points"`
	Submissions []Document  `json:"submissions"`
}

// ClassCase is one graded case and its worth.
type ClassCase struct {
	Case      int    `json:"case"`
	Title     string `json:"title"`
	MaxPoints int    `json:"max_points"`
}

// Where `grade` writes its summaries unless told, in the lab's folder;
// .gitignore names them, so that a grader's checkout stays clean.
const (
	gradesCSV  = "grades.csv"
	gradesJSON = "grades.json"
)

// gradeCmd grades many submissions, each a clone of the lab or a copy of
// its cases/, with this checkout's checker: a table on the terminal, and
// the same in CSV and JSON files. Each case of each submission is laid
// over the lab's cases/ in a build of its own, so no submission can see or
// change another's; --jobs of those grades run at once.
func gradeCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	started := time.Now()
	if began, ok := goRunStart(); ok {
		started = began // go run's compile of the command is part of the wait
	}
	fs := flag.NewFlagSet("grade", flag.ContinueOnError)
	only := fs.String("only", "", "grade only these cases, such as 1,4")
	csvPath := fs.String("csv", "", "where to write the CSV summary (default: grades.csv in the lab's folder)")
	jsonPath := fs.String("json", "", "where to write the JSON summary (default: grades.json in the lab's folder)")
	repeat := fs.Int("repeat", defaultRepeat, "run each check that varies this many times, and the others once for every three")
	jobs := fs.Int("jobs", defaultJobs(), "how many grades run at once")
	fs.IntVar(jobs, "j", defaultJobs(), "short for --jobs")
	dirs, err := parse(fs, args, false)
	if err != nil {
		return err
	}
	if len(dirs) == 0 {
		return usagef("grade takes the submissions' folders, such as: go run ./shop grade ../submissions/*")
	}
	if *repeat < 1 {
		return usagef("--repeat must be at least 1")
	}
	if *jobs < 1 {
		return usagef("--jobs must be at least 1")
	}
	cases, err := onlyCases(*only)
	if err != nil {
		return err
	}
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	// Beside go.mod, wherever the command is run from; git ignores them.
	if *csvPath == "" {
		*csvPath = filepath.Join(root, gradesCSV)
	}
	if *jsonPath == "" {
		*jsonPath = filepath.Join(root, gradesJSON)
	}
	subs := make([]submission, len(dirs))
	for i, d := range dirs {
		if subs[i], err = resolveSubmission(root, d); err != nil {
			return err
		}
		if subs[i].cases == "" {
			return usagef("%s is this lab's own folder: grade students' clones, not the checker's", d)
		}
	}

	p := newProgress(stderr)
	noRace, err := prepare(ctx, root, true, cases, p)
	if err != nil {
		return err
	}
	if noRace != "" {
		return fmt.Errorf("grading needs the race detector: %s (how to get it is said above)", noRace)
	}
	lab := labOf(ctx, root)
	if lab.Modified {
		p.Line("note: this lab's checker/ or shop/ has changes not committed; the report says so")
	}
	class := Class{Schema: ClassSchema, Lab: lab, GradedAt: now(), Submissions: []Document{}}
	for _, c := range cases {
		class.Cases = append(class.Cases, ClassCase{c.Number, c.Title, points(c.Number)})
		class.MaxPoints += points(c.Number)
	}
	width := min(*jobs, len(subs)*len(cases))
	p.Line("grading %d submission(s) x %d case(s), %d at a time (--jobs); an estimate follows once each case is timed",
		len(subs), len(cases), width)
	b := batch{subs: subs, cases: cases, opts: grade.Options{Root: root, Repeat: *repeat}, jobs: width,
		p: p, grade: grade.Grade, now: time.Now}
	began := time.Now()
	reps, estimate, err := b.run(ctx)
	if err != nil {
		return err
	}
	took := time.Since(began)
	p.Clear()
	for i, s := range subs {
		doc := document(s.meta(ctx, root, noEnv), "cases", reps[i], false)
		doc.Lab = lab
		class.Submissions = append(class.Submissions, doc)
	}

	printClass(stdout, class)
	if err := writeFile(*csvPath, func(w io.Writer) error { return writeClassCSV(w, class) }); err != nil {
		return err
	}
	if err := writeFile(*jsonPath, func(w io.Writer) error { return writeJSON(w, class) }); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\nGraded in %s", round(took))
	if estimate >= 0 {
		fmt.Fprintf(stdout, " (estimated %s)", round(estimate))
	}
	if all := time.Since(started); all-took >= time.Second {
		fmt.Fprintf(stdout, "; %s in all, with compiling", round(all))
	}
	fmt.Fprintf(stdout, ". Wrote %s and %s.\n", *csvPath, *jsonPath)
	return nil
}

// onlyCases reads --only: case numbers separated by commas, or every case.
func onlyCases(list string) ([]check.Case, error) {
	if list == "" {
		return checker.Cases(), nil
	}
	var cases []check.Case
	for _, s := range strings.Split(list, ",") {
		c, err := caseArg(strings.TrimSpace(s))
		if err != nil {
			return nil, err
		}
		cases = append(cases, c)
	}
	return cases, nil
}

func writeFile(path string, write func(io.Writer) error) error {
	if dir := filepath.Dir(path); dir != "." {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return f.Close()
}

// cell is a case's cell in the class table: its points when solved;
// otherwise 0 with the checks passed on the way, or "?" when it could not
// be graded in full.
func cell(c CaseReport) string {
	switch c.Status {
	case CasePass:
		return strconv.Itoa(c.Score.Points)
	case CaseIncomplete:
		return "? (no race)"
	}
	if !c.Compiles {
		return "0 (no build)"
	}
	return fmt.Sprintf("0 (%d/%d)", c.Score.Passed, len(c.Checks))
}

// modifiedCell is the CSV's modified column: whether the submission's
// cases/ had changes not committed, or empty when it is not a clone (there
// is no commit to differ from).
func modifiedCell(s Submission) string {
	if s.Commit == "" {
		return ""
	}
	return strconv.FormatBool(s.Modified)
}

// printClass writes the class table: a row per submission, a column per
// case, and the total.
func printClass(w io.Writer, class Class) {
	subW, nameW := len("submission"), len("student")
	for _, d := range class.Submissions {
		subW = max(subW, len(d.Submission.Dir))
		nameW = max(nameW, len(d.Student.Name))
	}
	const colW = 13
	fmt.Fprintf(w, "%-*s%-*s", subW+2, "submission", nameW+2, "student")
	for _, c := range class.Cases {
		fmt.Fprintf(w, "%-*s", colW, fmt.Sprintf("case %d /%d", c.Case, c.MaxPoints))
	}
	fmt.Fprintln(w, "points")
	for _, d := range class.Submissions {
		fmt.Fprintf(w, "%-*s%-*s", subW+2, d.Submission.Dir, nameW+2, d.Student.Name)
		for _, c := range d.Cases {
			fmt.Fprintf(w, "%-*s", colW, cell(c))
		}
		fmt.Fprintf(w, "%d/%d\n", d.Score.Points, d.Score.MaxPoints)
	}
	dim.Fprintln(w, allOrNothing)
}

// writeClassCSV writes a row per submission: who, which commit and
// whether its cases/ had changes not committed, each case's points, checks
// passed, the ids of the checks that failed and the compiler's errors,
// and the total.
func writeClassCSV(w io.Writer, class Class) error {
	cw := csv.NewWriter(w)
	head := []string{"student", "email", "source", "submission", "commit", "modified"}
	for _, c := range class.Cases {
		n := strconv.Itoa(c.Case)
		head = append(head, "case"+n+"_points", "case"+n+"_status", "case"+n+"_checks",
			"case"+n+"_failed", "case"+n+"_compile_errors")
	}
	head = append(head, "points", "max_points", "cases_passed", "lab_commit", "graded_at")
	if err := cw.Write(head); err != nil {
		return err
	}
	for _, d := range class.Submissions {
		row := []string{d.Student.Name, d.Student.Email, d.Student.Source, d.Submission.Dir, d.Submission.Commit,
			modifiedCell(d.Submission)}
		for _, c := range d.Cases {
			row = append(row, strconv.Itoa(c.Score.Points), string(c.Status),
				fmt.Sprintf("%d/%d", c.Score.Passed, len(c.Checks)),
				strings.Join(c.Failing, " "), strings.Join(c.CompileErrors, "\n"))
		}
		row = append(row, strconv.Itoa(d.Score.Points), strconv.Itoa(d.Score.MaxPoints),
			strconv.Itoa(d.Score.CasesPassed), d.Lab.Commit, d.GradedAt)
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
