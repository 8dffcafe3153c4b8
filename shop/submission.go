package main

import (
	"context"
	"os"
	"path/filepath"

	"stampede/checker"
	"stampede/checker/check"
	"stampede/checker/grade"
)

// submission is the code a command grades: the lab's own cases/ (dir is
// empty), or another folder's, graded with this checkout's checker. The
// checker never comes from the submission: only its cases/caseNN files are
// laid over the lab's (grade.Target.Src), so a student's change to
// checker/ in their own clone changes nothing here.
type submission struct {
	given string // the folder as the user named it, for messages
	cases string // its absolute cases/ folder; empty for the lab's own
}

// resolveSubmission finds the cases/ folder of dir, a clone of the lab or
// a copy of its cases/ folder. An empty dir is the lab's own.
func resolveSubmission(root, dir string) (submission, error) {
	if dir == "" {
		return submission{}, nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return submission{}, err
	}
	for _, cand := range []string{filepath.Join(abs, "cases"), abs} {
		if hasCaseDirs(cand) {
			if cand == filepath.Join(root, "cases") {
				return submission{}, nil // the lab's own, named the long way
			}
			return submission{given: dir, cases: cand}, nil
		}
	}
	return submission{}, usagef("%s holds no cases/ folder with case01, case02, ... (give a clone of the lab, or its cases/ folder)", dir)
}

func hasCaseDirs(dir string) bool {
	for _, c := range checker.Cases() {
		if info, err := os.Stat(filepath.Join(dir, c.Dir())); err == nil && info.IsDir() {
			return true
		}
	}
	return false
}

// target is the submission's implementation of case c.
func (s submission) target(c check.Case) grade.Target {
	t := grade.Student(c)
	if s.cases != "" {
		t.Src = filepath.Join(s.cases, c.Dir())
	}
	return t
}

// show names a target's folder for the report's header.
func (s submission) show(t grade.Target) string {
	if s.cases == "" || t.Src == "" {
		return t.Dir()
	}
	return t.Src
}

// meta says which lab graded whom, and when. getenv is the environment a
// run for one student reads (GITHUB_ACTOR, in GitHub Actions, names who
// pushed); `grade`, which grades many, passes noEnv.
func (s submission) meta(ctx context.Context, root string, getenv func(string) string) Meta {
	m := Meta{Lab: labOf(ctx, root), GradedAt: now()}
	if s.cases == "" {
		m.Student = whoIsHere(ctx, root, getenv)
		m.Submission = submissionOf(ctx, root, ".")
		return m
	}
	dir := filepath.Dir(s.cases)
	if filepath.Base(s.cases) != "cases" {
		dir = s.cases
	}
	m.Student = whoSubmitted(ctx, root, dir)
	if actor := getenv("GITHUB_ACTOR"); actor != "" {
		// The Classroom workflow grades the student's repository with the
		// lab's checker (--cases): who pushed is the student, where a
		// shallow checkout's last commit may be the template's.
		m.Student = Person{Name: actor, Source: "GITHUB_ACTOR"}
	}
	m.Submission = submissionOf(ctx, dir, s.given)
	return m
}

// noEnv is an empty environment.
func noEnv(string) string { return "" }
