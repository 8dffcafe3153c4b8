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

// gradeCmd grades many submissions, each a clone of the lab or a copy of
// its cases/, with this checkout's checker: a table on the terminal, and
// the same in CSV and JSON files. Each submission's files are laid over
// the lab's cases/ in a build of its own, and graded one submission after
// another, so no submission can see or change another's.
func gradeCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("grade", flag.ContinueOnError)
	only := fs.String("only", "", "grade only these cases, such as 1,4")
	csvPath := fs.String("csv", "grades.csv", "where to write the CSV summary")
	jsonPath := fs.String("json", "grades.json", "where to write the JSON summary")
	repeat := fs.Int("repeat", defaultRepeat, "run each check this many times")
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
	cases, err := onlyCases(*only)
	if err != nil {
		return err
	}
	root, err := moduleRoot()
	if err != nil {
		return err
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
		return fmt.Errorf("grading needs the race detector: %s. %s", noRace, compilerAdvice)
	}
	lab := labOf(ctx, root)
	if lab.Modified {
		p.Line("note: this lab's checker/ or shop/ has changes not committed; the report says so")
	}
	class := Class{Schema: ClassSchema, Lab: lab, GradedAt: now(), Submissions: []Document{}}
	for _, c := range cases {
		class.Cases = append(class.Cases, ClassCase{c.Number, c.Title, casePoints[c.Number]})
		class.MaxPoints += casePoints[c.Number]
	}
	total, done := len(subs)*len(cases), 0
	for _, s := range subs {
		var reps []grade.Report
		for _, c := range cases {
			done++
			p.Step(done, total, fmt.Sprintf("%s: case %d", s.given, c.Number))
			rep, err := grade.Grade(ctx, s.target(c), grade.Options{Root: root, Repeat: *repeat})
			if err != nil {
				return fmt.Errorf("grading %s, case %d: %w", s.given, c.Number, err)
			}
			reps = append(reps, rep)
		}
		doc := document(s.meta(ctx, root), "cases", reps, false)
		doc.Lab = lab
		class.Submissions = append(class.Submissions, doc)
	}
	p.Clear()

	printClass(stdout, class)
	if err := writeFile(*csvPath, func(w io.Writer) error { return writeClassCSV(w, class) }); err != nil {
		return err
	}
	if err := writeFile(*jsonPath, func(w io.Writer) error { return writeJSON(w, class) }); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\nWrote %s and %s.\n", *csvPath, *jsonPath)
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
	dim.Fprintln(w, "A case earns its points only when every check passes; (3/5) counts the checks passed on the way.")
}

// writeClassCSV writes a row per submission: who, which commit, each
// case's points and checks passed, and the total.
func writeClassCSV(w io.Writer, class Class) error {
	cw := csv.NewWriter(w)
	head := []string{"student", "email", "source", "submission", "commit"}
	for _, c := range class.Cases {
		n := strconv.Itoa(c.Case)
		head = append(head, "case"+n+"_points", "case"+n+"_status", "case"+n+"_checks")
	}
	head = append(head, "points", "max_points", "cases_passed", "lab_commit", "graded_at")
	if err := cw.Write(head); err != nil {
		return err
	}
	for _, d := range class.Submissions {
		row := []string{d.Student.Name, d.Student.Email, d.Student.Source, d.Submission.Dir, d.Submission.Commit}
		for _, c := range d.Cases {
			row = append(row, strconv.Itoa(c.Score.Points), string(c.Status),
				fmt.Sprintf("%d/%d", c.Score.Passed, len(c.Checks)))
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
