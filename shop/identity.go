package main

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Lab identifies the checker that graded: the commit of the lab's checkout,
// and whether its grading code differs from that commit.
type Lab struct {
	Commit string `json:"commit"` // "unknown" outside a git checkout
	// Modified is set when checker/, shop/, go.mod or go.sum differ from
	// the commit: a grade from a modified checker proves nothing.
	Modified bool `json:"modified"`
}

// Person is who was graded, and where that name came from.
type Person struct {
	Name  string `json:"name"`
	Email string `json:"email,omitempty"`
	// Source is "GITHUB_ACTOR" (a GitHub Actions run), "git config" (the
	// student's own clone), "last commit" (a submission graded by
	// `grade` or --cases), or "folder name" when git knew nothing.
	Source string `json:"source"`
}

// Submission is the code that was graded.
type Submission struct {
	Dir    string `json:"dir"`              // the folder holding cases/, as given
	Commit string `json:"commit,omitempty"` // its HEAD, when it is a git clone
	// Modified is set when its cases/ has changes not committed.
	Modified bool `json:"modified,omitempty"`
}

// Meta is what a report says about itself: which lab graded whom, and when.
type Meta struct {
	Lab        Lab        `json:"lab"`
	GradedAt   string     `json:"graded_at"` // RFC 3339, UTC
	Student    Person     `json:"student"`
	Submission Submission `json:"submission"`
}

// git runs a git command in dir and returns its trimmed output, or "" when
// git is missing or the command fails (not a clone, no config).
func git(ctx context.Context, dir string, args ...string) string {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// labOf identifies the lab checked out at root.
func labOf(ctx context.Context, root string) Lab {
	lab := Lab{Commit: git(ctx, root, "rev-parse", "HEAD")}
	if lab.Commit == "" {
		lab.Commit = "unknown"
		return lab
	}
	lab.Modified = git(ctx, root, "status", "--porcelain", "--", "checker", "shop", "go.mod", "go.sum") != ""
	return lab
}

// submissionOf describes the submission in dir. Only a clone of its own
// has a commit: a plain folder inside another checkout (the grader's own,
// say) would otherwise be given that checkout's commit.
func submissionOf(ctx context.Context, dir, shown string) Submission {
	s := Submission{Dir: shown}
	if !ownRepo(ctx, dir) {
		return s
	}
	s.Commit = git(ctx, dir, "rev-parse", "HEAD")
	if s.Commit != "" {
		s.Modified = git(ctx, dir, "status", "--porcelain", "--", "cases") != ""
	}
	return s
}

// ownRepo reports whether dir is the top of a git working tree, and not a
// folder inside another one.
func ownRepo(ctx context.Context, dir string) bool {
	top := git(ctx, dir, "rev-parse", "--show-toplevel")
	return top != "" && sameDir(top, dir)
}

// sameDir reports whether a and b name one folder, links resolved.
func sameDir(a, b string) bool {
	ra, errA := filepath.EvalSymlinks(a)
	rb, errB := filepath.EvalSymlinks(b)
	if errA != nil || errB != nil {
		return filepath.Clean(a) == filepath.Clean(b)
	}
	return filepath.Clean(ra) == filepath.Clean(rb)
}

// whoIsHere is the student grading their own clone: the CI's actor when
// run by GitHub Actions, else git's configured user, else the account.
func whoIsHere(ctx context.Context, root string, getenv func(string) string) Person {
	if actor := getenv("GITHUB_ACTOR"); actor != "" {
		return Person{Name: actor, Source: "GITHUB_ACTOR"}
	}
	if name := git(ctx, root, "config", "user.name"); name != "" {
		return Person{Name: name, Email: git(ctx, root, "config", "user.email"), Source: "git config"}
	}
	name := getenv("USER")
	if name == "" {
		name = getenv("USERNAME")
	}
	return Person{Name: name, Source: "account"}
}

// whoSubmitted is the author of a submission graded from outside it, by
// root's lab: the author of the last commit that changed its cases/, or its
// folder's name. A commit the lab itself has (the student has not committed
// yet) names the lab's author, not the student, so it names no one. The
// grader's own git config would name the instructor, so it is not asked.
func whoSubmitted(ctx context.Context, root, dir string) Person {
	if !ownRepo(ctx, dir) {
		return byFolder(dir)
	}
	if out := git(ctx, dir, "log", "-1", "--format=%H%x00%an%x00%ae", "--", "cases"); out != "" {
		f := strings.SplitN(out, "\x00", 3)
		if len(f) == 3 && git(ctx, root, "cat-file", "-t", f[0]) != "commit" {
			return Person{Name: f[1], Email: f[2], Source: "last commit"}
		}
	}
	return byFolder(dir)
}

// byFolder names a submission after its folder, as Classroom names each
// student's repository.
func byFolder(dir string) Person {
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = dir
	}
	return Person{Name: filepath.Base(abs), Source: "folder name"}
}

// now is the time a report is stamped with.
func now() string { return time.Now().UTC().Format(time.RFC3339) }
